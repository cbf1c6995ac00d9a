# SPDX-License-Identifier: MIT
# embed.cmake - cmake -DIN=bench/table.gp -DOUT=table_gp.c -P embed.cmake:
# turns the gnuplot script into a C array, so that an installed lpcbench
# draws its plots without finding the source tree.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}"
"/* Generated from bench/table.gp by tools/harness/embed.cmake: do not edit. */
#include <stddef.h>
extern const char plot_table_gp[];
extern const size_t plot_table_gp_len;
const char plot_table_gp[] = { ${bytes}0x00 };
const size_t plot_table_gp_len = sizeof(plot_table_gp) - 1;
")
