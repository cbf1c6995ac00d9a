#!/bin/sh
# SPDX-License-Identifier: MIT
# check_needed.sh READELF LIB [--selftest]: LIB's NEEDED entries name no
# storage library (librbd, librados) nor liblpc (liblpc_sqlite carries its
# own lpc and links no opener's library, lpc_sqlite_set_opener).
# --selftest: LIB must be one that does (liblpc_rbd): passes when the
# check finds it.
readelf=$1 lib=$2
out=$("$readelf" -d "$lib") || exit 1
echo "$out" | grep NEEDED
bad=$(echo "$out" | grep -E 'NEEDED.*(librbd|librados|liblpc[._])')
if [ "$3" = --selftest ]; then
	[ -n "$bad" ] && echo "selftest: found: $bad" && exit 0
	echo "selftest: $lib links none of them: the check would miss it"
	exit 1
fi
[ -z "$bad" ] && exit 0
echo "$lib links: $bad"
exit 1
