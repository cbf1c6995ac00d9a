#!/bin/sh
# rep.sh R ARGS...: policy.base and policy interleaved R times on ARGS; SUMMARY lines.
cd "$(dirname "$0")"
F=${F:-/var/tmp/atkws2/r}
R=$1; shift
for i in $(seq $R); do
	for v in policy.base policy; do
		./bin/$v $F "$@" | grep SUMMARY | sed "s/^SUMMARY /[$*] /; s/(3946151, fixed 50 %)//; s/(42328fc, moving target)//"
	done
done
