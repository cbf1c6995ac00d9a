#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# deps.sh - install the Debian 12 (bookworm) packages that lpc's build, tests
# and benchmark need.  Idempotent and non-interactive: when every package is
# already installed it changes nothing and runs no `apt-get update`.  Runs as
# root, or through sudo when there is one.
#
#   build-essential  gcc 12, make, binutils (nm); gcc-12 brings the sanitizer
#                    runtimes (libasan8, libubsan1, libtsan2) with libgcc-12-dev
#   cmake, ninja-build, pkg-config
#   liburcu-dev      RCU (urcu-memb flavour: membarrier(2))
#   liburing-dev     the io_uring backend (src/io/uring.c)
#   spin             the Promela model checker (tests/model)
#   man-db, groff-base  render the man pages in the docs.man test
#   gnuplot-nox      lpcbench --plot draws its SVGs with it (optional there:
#                    without it lpcbench writes the CSVs and says so)
#   clang, libclang-rt-14-dev  libFuzzer targets (tests/fuzz), and the record
#                    layouts packaging.abi compares (scripts/check-abi.py);
#                    both skipped without
#   libsqlite3-dev, sqlite3, python3  the SQLite VFS (src/sqlite) and its tests
#                    (tests/sqlite: the stock shell and python3 load it)
#   librbd-dev       the RBD backend library (src/rbd, liblpc_rbd; librados too)
#   ceph-mon, ceph-osd, ceph-common  the single-node Ceph 16.2 cluster that
#                    scripts/ceph-cluster.sh starts for tests/rbd and lpcbench
#                    rbd (ceph-common: the rados and rbd tools, ceph.conf's
#                    defaults)
#
# deps.sh --deb adds what scripts/check-deb.sh needs to build and check the
# Debian packages:
#   debhelper        dh with its CMake build system (debian/rules)
#   dpkg-dev         dpkg-buildpackage, dpkg-gensymbols (also in build-essential)
#   lintian          the packages' checks
#
# On a system without dpkg (not Debian) it only checks that the tools,
# liburcu-memb and liburing are there, and says what is missing.
set -euo pipefail

PACKAGES=(build-essential cmake ninja-build pkg-config liburcu-dev liburing-dev spin man-db groff-base
	  gnuplot-nox clang libclang-rt-14-dev libsqlite3-dev sqlite3 python3
	  librbd-dev ceph-mon ceph-osd ceph-common)
case ${1:-} in
--deb) PACKAGES+=(debhelper dpkg-dev lintian) ;;
'') ;;
*) echo "usage: $0 [--deb]" >&2; exit 2 ;;
esac

say() { echo "deps: $*"; }

if ! command -v dpkg-query >/dev/null 2>&1; then
	missing=()
	for t in cc cmake ninja pkg-config spin nm; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	if command -v pkg-config >/dev/null 2>&1 &&
	   ! pkg-config --exists liburcu-memb; then
		missing+=(liburcu-memb)
	fi
	if command -v pkg-config >/dev/null 2>&1 && ! pkg-config --exists liburing; then
		missing+=(liburing)
	fi
	if ((${#missing[@]})); then
		say "not a Debian system and missing: ${missing[*]}" >&2
		exit 1
	fi
	say "not a Debian system; every tool is present"
	exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	say "all present (${PACKAGES[*]})"
	exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then
		as_root=(sudo)
	else
		say "need root (or sudo) to install: ${missing[*]}" >&2
		exit 1
	fi
fi

apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y
     -o DPkg::Lock::Timeout=600)
say "installing: ${missing[*]}"
"${apt[@]}" update
"${apt[@]}" install --no-install-recommends "${missing[@]}"
say "done"
