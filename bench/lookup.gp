# SPDX-License-Identifier: MIT
#
# lookup.gp - the lookup benchmark's cost relative to the floor, as a bar chart.
#
#   lpcbench lookup --csv lookup.csv
#   gnuplot -e "csv='lookup.csv'; png='lookup.png'" bench/lookup.gp
#
# One cluster per variant, one bar per thread count: the median over the rounds
# of the per-round ratio ticks/op(variant) / ticks/op(floor), with the range
# [min - max] as an error bar.  The y axis is logarithmic: lpc's lookups sit
# near 1, the kernel's pread tens of times above.  The variants and thread
# counts are read from the CSV (summary rows of metric ratio_floor), in the
# order the run used, so the script follows any --threads and --variants list
# (kernel_hot and lpc_pread_hot included).

if (!exists("csv")) csv = "lookup.csv"
if (!exists("png")) png = "lookup.png"

# awk prints the distinct values of one column of the ratio_floor summaries.
distinct(col) = system(sprintf( \
	"awk -F, '$1 == \"lookup\" && $2 == \"summary\" && $6 == \"ratio_floor\" && !seen[$%d]++ { printf \"%%s \", $%d }' '%s'", \
	col, col, csv))
variants = distinct(5)
threads = distinct(4)
nv = words(variants)
nt = words(threads)
if (nv == 0 || nt == 0) {
	print sprintf("lookup.gp: no lookup summary rows in %s (run lpcbench lookup --csv %s)", csv, csv)
	exit status 1
}

vid(s) = sum [i = 1:nv] (word(variants, i) eq s ? i : 0)
bw = 0.8 / nt # width of one bar; a cluster is 0.8 wide
x(s, j) = vid(s) + (j - (nt + 1) / 2.0) * bw
is_row(j) = strcol(1) eq "lookup" && strcol(2) eq "summary" && \
	    strcol(6) eq "ratio_floor" && strcol(4) eq word(threads, j)

set terminal pngcairo size 1000, 560 noenhanced font ",10"
set output png
set datafile separator ","
set title "lpcbench lookup: ticks per operation relative to the floor (median, range over rounds)"
set ylabel "ticks/op / floor's ticks/op (log scale)"
set logscale y 2
set yrange [0.5:*]
set xrange [0.4:nv + 0.6]
set xtics () nomirror
do for [i = 1:nv] {
	set xtics add (word(variants, i) i)
}
set grid ytics
set key top left title "threads"
set style fill solid 0.75 border -1
set boxwidth bw absolute
set arrow from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 2 lc rgb "#aa0000"
set label "1.5x floor (target a)" at graph 0.01, first 1.62 tc rgb "#aa0000" font ",8"

plot for [j = 1:nt] csv skip 1 \
	using (is_row(j) ? x(strcol(5), j) : NaN):7:8:9:(bw) \
	with boxerrorbars title word(threads, j), \
     for [j = 1:nt] csv skip 1 \
	using (is_row(j) ? x(strcol(5), j) : NaN):($9 * 1.08):(sprintf("%.2f", $7)) \
	with labels font ",7" notitle
