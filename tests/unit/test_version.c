/* SPDX-License-Identifier: MIT */
/*
 * test_version.c - lpc_version() against the LPC_VERSION_* macros of lpc.h
 * and the version CMake built the library as (LPC_TEST_PROJECT_VERSION, from
 * project(VERSION)).  Exits 0 pass, 1 fail.
 */
#include <stdio.h>
#include <string.h>

#include <lpc/lpc.h>

#include "../common/lpc_test.h"


int main(int argc, char **argv)
{
	const char *v;
	char want[64];

	tst_init(argc, argv, 10);
	v = lpc_version();
	REQUIRE(v != NULL, "lpc_version() returned NULL");
	CHECK(!strcmp(v, LPC_VERSION_STRING), "lpc_version() \"%s\" != LPC_VERSION_STRING \"%s\"",
	      v, LPC_VERSION_STRING);
	snprintf(want, sizeof(want), "%d.%d.%d", LPC_VERSION_MAJOR, LPC_VERSION_MINOR,
		 LPC_VERSION_PATCH);
	CHECK(!strcmp(v, want), "lpc_version() \"%s\" != macros \"%s\"", v, want);
#ifdef LPC_TEST_PROJECT_VERSION
	CHECK(!strcmp(v, LPC_TEST_PROJECT_VERSION), "lpc_version() \"%s\" != project(VERSION) \"%s\"",
	      v, LPC_TEST_PROJECT_VERSION);
#endif
	CHECK(lpc_version() == v, "not one static string");
	return tst_finish();
}
