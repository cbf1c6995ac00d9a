/* SPDX-License-Identifier: MIT */
/*
 * version.c - lpc_version(): the version of the library actually loaded,
 * which may differ from the LPC_VERSION_* macros a program was compiled
 * against.  The string comes from CMake's PROJECT_VERSION (src/CMakeLists.txt
 * passes it as LPC_BUILD_VERSION_*); the build fails if lpc.h's macros say
 * otherwise, so the two cannot drift apart.
 */
#include <lpc/lpc.h>

#include "core/compiler.h"

#if !defined(LPC_BUILD_VERSION) || !defined(LPC_BUILD_VERSION_MAJOR) || \
	!defined(LPC_BUILD_VERSION_MINOR) || !defined(LPC_BUILD_VERSION_PATCH)
#error "LPC_BUILD_VERSION* must come from the build (src/CMakeLists.txt)"
#endif
#if LPC_VERSION_MAJOR != LPC_BUILD_VERSION_MAJOR || \
	LPC_VERSION_MINOR != LPC_BUILD_VERSION_MINOR || \
	LPC_VERSION_PATCH != LPC_BUILD_VERSION_PATCH
#error "LPC_VERSION_* in include/lpc/lpc.h differ from project(VERSION) in CMakeLists.txt"
#endif

_Static_assert(sizeof(LPC_VERSION_STRING) == sizeof(LPC_BUILD_VERSION),
	       "LPC_VERSION_STRING differs from project(VERSION)");

LPC_EXPORT const char *lpc_version(void)
{
	return LPC_BUILD_VERSION;
}
