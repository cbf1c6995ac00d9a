# SPDX-License-Identifier: MIT
#
# table.gp - one table of `lpcbench --plot DIR` as a bar chart in SVG.
#
# lpcbench runs this script (built into it, and written as DIR/table.gp) for
# every table it prints; DIR/plots.txt lists each command.  By hand:
#
#   gnuplot -e "csv='DIR/lookup.csv'; xcol=2; scol=1; ycol=6; locol=7; hicol=8; logy=1" bench/table.gp
#
# Parameters (gnuplot variables, set with -e):
#   csv          the table: a header line, then one row per printed row [required]
#   svg          the output [csv with .svg for .csv]
#   title ylabel stitle   chart title, y axis label, legend title
#   xcol         column (1-based) that names the clusters, in the order met [1]
#   scol         column that names the bars of a cluster; 0: one bar each [0]
#   ycol         the bar's height [3]
#   locol hicol  the error bar's ends, e.g. the [min - max] over rounds; 0: none
#   logy         1: logarithmic y axis (base 2)
#   ref reflabel a dashed horizontal line (a target) and its label
# An empty field is a missing value: no bar.  Names must not hold spaces.

if (!exists("csv")) { print "table.gp: give the table with -e \"csv='FILE.csv'\""; exit status 1 }
if (!exists("svg")) svg = csv[1:strlen(csv) - 4] . ".svg"
if (!exists("title")) title = csv
if (!exists("ylabel")) ylabel = ""
if (!exists("stitle")) stitle = ""
if (!exists("xcol")) xcol = 1
if (!exists("scol")) scol = 0
if (!exists("ycol")) ycol = 3
if (!exists("locol")) locol = 0
if (!exists("hicol")) hicol = 0
if (!exists("logy")) logy = 0

# awk prints the distinct values of one column, in the order of the rows.
distinct(col) = system(sprintf( \
	"awk -F, 'NR > 1 && $%d != \"\" && !seen[$%d]++ { printf \"%%s \", $%d }' '%s'", \
	col, col, col, csv))
groups = distinct(xcol)
series = scol > 0 ? distinct(scol) : "-"
ng = words(groups)
ns = words(series)
if (ng == 0) {
	print sprintf("table.gp: no rows in %s", csv)
	exit status 1
}

gid(s) = sum [i = 1:ng] (word(groups, i) eq s ? i : 0)
bw = 0.8 / ns # width of one bar; a cluster is 0.8 wide
x(s, j) = gid(s) + (j - (ns + 1) / 2.0) * bw
in_series(j) = scol > 0 ? strcol(scol) eq word(series, j) : 1
top(j) = hicol > 0 ? column(hicol) : column(ycol)

set terminal svg size 1000, 560 dynamic noenhanced font "sans,10" background rgb "white"
set output svg
set datafile separator ","
set title title
set ylabel ylabel
if (logy) {
	# Bars start at the axis' bottom: put it below the smallest bar.
	stats csv skip 1 using (column(ycol) > 0 ? column(ycol) : NaN) nooutput
	set logscale y 2
	if (STATS_min > 0) { set yrange [STATS_min / 2.0:*] }
} else {
	set yrange [0:*]
}
set xrange [0.4:ng + 0.6]
set xtics () nomirror
if (ng > 6) { set xtics rotate by -25 }
do for [i = 1:ng] {
	set xtics add (word(groups, i) i)
}
set grid ytics
if (scol > 0) { set key top left title stitle } else { unset key }
set style fill solid 0.75 border -1
set boxwidth bw absolute
if (exists("ref")) {
	set arrow from graph 0, first ref to graph 1, first ref nohead dt 2 lc rgb "#aa0000"
	if (exists("reflabel")) { set label reflabel at graph 0.01, first ref * (logy ? 1.08 : 1.02) tc rgb "#aa0000" font ",8" }
}

if (locol > 0 && hicol > 0) {
	plot for [j = 1:ns] csv skip 1 \
		using (in_series(j) ? x(strcol(xcol), j) : NaN):(column(ycol)):(column(locol)):(column(hicol)):(bw) \
		with boxerrorbars title word(series, j), \
	     for [j = 1:ns] csv skip 1 \
		using (in_series(j) ? x(strcol(xcol), j) : NaN):(top(j) * (logy ? 1.08 : 1.0)):(sprintf("%.3g", column(ycol))) \
		with labels offset 0, 0.6 font ",7" notitle
} else {
	plot for [j = 1:ns] csv skip 1 \
		using (in_series(j) ? x(strcol(xcol), j) : NaN):(column(ycol)):(bw) \
		with boxes title word(series, j), \
	     for [j = 1:ns] csv skip 1 \
		using (in_series(j) ? x(strcol(xcol), j) : NaN):(top(j) * (logy ? 1.08 : 1.0)):(sprintf("%.3g", column(ycol))) \
		with labels offset 0, 0.6 font ",7" notitle
}
