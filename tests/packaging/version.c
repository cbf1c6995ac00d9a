/* SPDX-License-Identifier: MIT */
/*
 * version.c - prints the version this program was compiled with
 * (LPC_VERSION_* of lpc.h) and the one of the liblpc.so it runs with
 * (lpc_version()), for check_version.sh: "macros M.m.p STRING runtime R".
 */
#include <stdio.h>

#include <lpc/lpc.h>

int main(void)
{
	printf("macros %d.%d.%d %s runtime %s\n", LPC_VERSION_MAJOR, LPC_VERSION_MINOR,
	       LPC_VERSION_PATCH, LPC_VERSION_STRING, lpc_version());
	return 0;
}
