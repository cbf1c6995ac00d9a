# Pairs statshim's stat lines (before and after each row, in row order) and prints,
# per row: in_flight at the before and after readings, read requests and sectors in the row,
# and sectors whose reads completed between this row's after reading and the next row's before reading
# (counted in no row).
/\/stat: / {
	sub(/.*\/stat: */, "");
	split($0, f, " ");
	n++;
	rd[n] = f[1]; sec[n] = f[3]; inf[n] = f[9];
}
END {
	printf "%4s %11s %10s %9s %10s %12s\n", "row", "infl_before", "infl_after", "requests", "sectors", "gap_sectors";
	for (i = 1; i + 1 <= n; i += 2) {
		gap = (i + 2 <= n) ? sec[i + 2] - sec[i + 1] : 0;
		printf "%4d %11d %10d %9d %10d %12d\n", (i + 1) / 2, inf[i], inf[i + 1],
		       rd[i + 1] - rd[i], sec[i + 1] - sec[i], gap;
	}
}
