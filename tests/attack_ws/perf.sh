#!/bin/sh
# Interleaved base/new rounds of missbench; prints each run, then per
# workload the median of new/base ops/s ratios and their range.
cd "$(dirname "$0")"
F=${F:-/var/tmp/atkws/m}
ROUNDS=${ROUNDS:-8}
SECS=${SECS:-1.5}
THREADS=${THREADS:-1}
for x in 2 8 0.5; do
	r=1
	while [ $r -le $ROUNDS ]; do
		b=$(./bin/missbench.base $F $x $THREADS $SECS | sed 's/.*ops\/s \([0-9]*\).*/\1/')
		n=$(./bin/missbench $F $x $THREADS $SECS | sed 's/.*ops\/s \([0-9]*\).*/\1/')
		echo "x=$x threads=$THREADS round $r base $b new $n ratio $(echo "scale=3; $n/$b" | bc)"
		r=$((r + 1))
	done
done | tee /dev/stderr | awk '{k=$1" "$2; print k, $NF}' | sort -k1,2 -k3n | awk '
	{k=$1" "$2; v[k]=v[k]" "$3; n[k]++}
	END {for (k in v) {split(substr(v[k],2), a, " "); m=n[k]; med=(m%2)?a[(m+1)/2]:(a[m/2]+a[m/2+1])/2;
		printf("%s: new/base ops/s median %.3f, range %.3f-%.3f (%d rounds)\n", k, med, a[1], a[m], m)}}'
