#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# ceph-cluster.sh - a throw-away single-node Ceph cluster (Debian 12's 16.2
# packages: ceph-mon, ceph-osd, ceph-common) for the RBD backend's tests and
# `lpcbench rbd`.
#
#   ceph-cluster.sh up DIR       start it in DIR (must not exist or be empty);
#                                prints the conf path (DIR/ceph.conf) on stdout
#   ceph-cluster.sh down DIR     stop exactly the daemons `up` started and
#                                remove DIR
#   ceph-cluster.sh osd-stop DIR   stop the OSD cleanly (it tells the monitor
#                                it goes down; memstore keeps its objects in
#                                DIR until it starts again)
#   ceph-cluster.sh osd-start DIR  start it again and wait until it serves
#   ceph-cluster.sh check        exit 0 if the packages are installed, 77 and
#                                one line on stderr if not
#
# The cluster: one ceph-mon (id a) and one ceph-osd (id 0, osd_objectstore =
# memstore: objects in the OSD's memory, at most LPC_CEPH_OSD_BYTES, default
# 1 GiB), auth none, msgr v2 only, bound to 127.0.0.1 on a free port, pool
# size 1 (osd_pool_default_size = 1, mon_allow_pool_size_one), a CRUSH rule
# that chooses OSDs not hosts (osd_crush_chooseleaf_type = 0), a 10 ms
# paxos_propose_interval so map changes commit at once, and a pool `lpc`
# (8 PGs) with the rbd application enabled.  There is no mgr: `ceph -s`
# shows no PG states and health warns after a while; readiness is a rados
# write to the pool that completes (its PG is active), never HEALTH_OK.
#
# Every daemon runs in the foreground (-f) as a child of this script, started
# with setsid and its output in DIR/log; its pid goes to DIR/run/NAME.pid.
# `down` and `osd-stop` signal only those pids, and only while
# /proc/PID/cmdline still names DIR's conf (a pid reused by another process
# is left alone): SIGTERM, then SIGKILL after 10 s.  Never by name.
#
# Clients use the printed conf: `rados -c DIR/ceph.conf -p lpc ...`,
# `rbd -c DIR/ceph.conf create lpc/img --size 64M`, or rados_conf_read_file.
set -euo pipefail

usage() {
	echo "usage: $0 up|down|osd-stop|osd-start DIR | check" >&2
	exit 2
}

say() { echo "ceph-cluster: $*" >&2; }

# LPC_CEPH_VERBOSE=1: each step with its time since `up` began, on stderr.
t_start=$(date +%s%N)
step() {
	[[ -n ${LPC_CEPH_VERBOSE:-} ]] || return 0
	say "$(( ($(date +%s%N) - t_start) / 1000000 )) ms: $*"
}

check() {
	local t missing=()
	for t in ceph-mon ceph-osd monmaptool ceph rados; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	if ((${#missing[@]})); then
		say "skipped: ${missing[*]} not installed (scripts/deps.sh installs ceph-mon ceph-osd ceph-common)"
		return 77
	fi
}

# A free TCP port on 127.0.0.1 (the kernel picks one; the window until the
# monitor binds it is small, and a lost race fails `up` with the mon's log).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# alive NAME: the pid in DIR/run/NAME.pid, if that process still runs with
# our conf on its command line.
alive() {
	local pidf=$dir/run/$1.pid pid
	[[ -f $pidf ]] || return 1
	pid=$(<"$pidf")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$conf" || return 1
	echo "$pid"
}

stop_daemon() {
	local name=$1 pid i
	pid=$(alive "$name") || { rm -f "$dir/run/$name.pid"; return 0; }
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		[[ -d /proc/$pid ]] || break
		# A zombie is gone as far as the cluster is concerned.
		[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
		sleep 0.1
	done
	if [[ -d /proc/$pid ]] && alive "$name" >/dev/null; then
		say "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/run/$name.pid"
}

# start_daemon NAME CMD...: CMD in the foreground, detached from our
# terminal and pipes (so a caller such as ctest that waits for its output to
# close does not wait for the daemon).
start_daemon() {
	local name=$1
	shift
	setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
	echo $! >"$dir/run/$name.pid"
}

# ceph_cmd ARGS: the ceph tool against our monitor, bounded in time.
ceph_cmd() {
	timeout 30 ceph -c "$conf" --connect-timeout 10 "$@"
}

# wait_io: a write and a read of one object in the pool complete, i.e. the
# OSD is up and the object's PG is active.  Up to a minute (a rados call
# waits for the OSD map to show the OSD up; one that outlives 20 s is
# retried).
wait_io() {
	local i
	for ((i = 0; i < 3; i++)); do
		step "rados put"
		if timeout 20 rados -c "$conf" -p lpc put .lpc-ready "$conf" 2>/dev/null &&
		   timeout 5 rados -c "$conf" -p lpc stat .lpc-ready >/dev/null 2>&1; then
			return 0
		fi
		alive osd.0 >/dev/null || { say "osd.0 exited: see $dir/log"; tail -5 "$dir/log/osd.0.out" >&2; return 1; }
		sleep 1
	done
	say "the pool did not serve I/O within a minute: see $dir/log"
	return 1
}

start_osd() {
	start_daemon osd.0 ceph-osd -f -c "$conf" -i 0
}

up() {
	if [[ -e $dir ]] && [[ -n $(ls -A "$dir" 2>/dev/null) ]]; then
		say "$dir exists and is not empty"
		exit 1
	fi
	mkdir -p "$dir"/{run,log,mon.a,osd.0}
	dir=$(cd "$dir" && pwd)
	conf=$dir/ceph.conf
	local fsid port osd_uuid t0=$SECONDS
	fsid=$(cat /proc/sys/kernel/random/uuid)
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	port=$(free_port)
	cat >"$conf" <<EOF
# Written by scripts/ceph-cluster.sh: a single-node test cluster.
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$port
public_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_msgr2 = true
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
auth_allow_insecure_global_id_reclaim = true
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
log_file = $dir/log/\$name.log
log_to_stderr = false
err_to_stderr = true
keyring = $dir/keyring
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
paxos_propose_interval = 0.01
mon_osd_min_down_reporters = 1

[client]
# Clients (the tests, lpcbench, the rados tool): many at once, so no admin
# socket, and their log in the OSD's way only on errors (stderr).
admin_socket =
log_file =

[mon]
mon_data = $dir/mon.a
mon_initial_members = a

[osd]
osd_data = $dir/osd.0
osd_objectstore = memstore
memstore_device_bytes = ${LPC_CEPH_OSD_BYTES:-1073741824}
osd_op_num_shards = 2
osd_op_num_threads_per_shard = 1
osd_crush_update_on_start = true
# A stop (SIGTERM) unmounts the store: memstore writes its objects to DIR
# then and reads them back at the next start (a fast shutdown would skip it
# and the OSD would come back empty).
osd_fast_shutdown = false
osd_class_load_list = *
osd_class_default_list = *
EOF
	# The monitor: a map with our one address, a keyring only because
	# --mkfs wants one (auth is none).
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" >/dev/null
	ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/keyring" \
		>>"$dir/log/mkfs.out" 2>&1 || { say "ceph-mon --mkfs failed: see $dir/log/mkfs.out"; exit 1; }
	step "mon.a --mkfs done"
	start_daemon mon.a ceph-mon -f -c "$conf" -i a
	# One ceph session (its Python start costs about a second) registers
	# the OSD and makes the pool; the monitor commits each at once.
	local out
	out=$(printf '%s\n' "osd new $osd_uuid 0" "osd pool create lpc 8 8" \
		"osd pool application enable lpc rbd" | ceph_cmd 2>&1) || true
	step "osd.0 registered, pool made"
	if ! grep -q "enabled application 'rbd' on pool 'lpc'" <<<"$out"; then
		say "the monitor did not make the pool: $out (see $dir/log)"
		exit 1
	fi
	ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/mkfs.out" 2>&1 ||
		{ say "ceph-osd --mkfs failed: see $dir/log/mkfs.out"; exit 1; }
	step "osd.0 --mkfs done"
	start_osd
	wait_io || exit 1
	say "up in $((SECONDS - t0)) s: mon.a pid $(<"$dir/run/mon.a.pid"), osd.0 pid $(<"$dir/run/osd.0.pid"), 127.0.0.1:$port"
	echo "$conf"
}

down() {
	[[ -d $dir ]] || return 0
	dir=$(cd "$dir" && pwd)
	conf=$dir/ceph.conf
	[[ -f $conf ]] || { say "$dir has no ceph.conf: not a cluster of ours, left alone"; exit 1; }
	stop_daemon osd.0
	stop_daemon mon.a
	rm -rf "$dir"
}

[[ $# -ge 1 ]] || usage
cmd=$1
if [[ $cmd == check ]]; then
	check
	exit $?
fi
[[ $# -eq 2 ]] || usage
dir=$2
conf=$dir/ceph.conf
case $cmd in
up)
	check || exit $?
	up
	;;
down) down ;;
osd-stop)
	dir=$(cd "$dir" && pwd) conf=$dir/ceph.conf
	stop_daemon osd.0
	;;
osd-start)
	dir=$(cd "$dir" && pwd) conf=$dir/ceph.conf
	alive osd.0 >/dev/null || start_osd
	wait_io
	;;
*) usage ;;
esac
