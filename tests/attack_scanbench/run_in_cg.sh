#!/bin/bash
# run_in_cg.sh LIMIT_BYTES(or 0 = no limit) cmd...: run cmd in a fresh v1 memcg
# the caller's own v1 memory cgroup (the machine's limits still apply)
P=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
L=$1; shift
CG=$P/rev18.$$; mkdir $CG
[ "$L" != 0 ] && echo $L > $CG/memory.limit_in_bytes
bash -c "echo \$\$ > $CG/cgroup.procs; exec $*"
echo "    failcnt $(cat $CG/memory.failcnt) max_usage $(( $(cat $CG/memory.max_usage_in_bytes)>>20 ))MiB kmem_max $(( $(cat $CG/memory.kmem.max_usage_in_bytes)>>10 ))KiB $(grep -E '^(total_pgmajfault|rss |cache )' $CG/memory.stat | tr '\n' ' ')"
rmdir $CG
