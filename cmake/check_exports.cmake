# SPDX-License-Identifier: MIT
#
# cmake -DLIB=liblpc.so -DMAP=src/lpc.map [-DNM=nm] [-DNAMES=REGEX] -P check_exports.cmake
#
# Fails unless the dynamic symbols that LIB defines are exactly the globals of
# the version script MAP, every one matching NAMES (default ^lpc_).  Catches both a symbol leaking
# out (a missing `static`, a helper without hidden visibility) and an API
# function that is missing or hidden (-fvisibility=hidden without an export
# attribute: the version script cannot export a hidden symbol).
cmake_minimum_required(VERSION 3.25)
if(NOT NM)
	set(NM nm)
endif()
if(NOT NAMES)
	set(NAMES "^lpc_")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIB}
	OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed: ${rc}")
endif()

# nm lines: "ADDRESS TYPE NAME[@[@]VERSION]"; type A is a version node.
set(have "")
string(REPLACE "\n" ";" lines "${out}")
foreach(line IN LISTS lines)
	if(line MATCHES "^[0-9a-fA-F]* +([A-Za-z]) +([^@ ]+)")
		if(NOT CMAKE_MATCH_1 STREQUAL "A")
			list(APPEND have ${CMAKE_MATCH_2})
		endif()
	endif()
endforeach()

# Globals of the map: in each node's { ... }, the names before "local:".
file(READ ${MAP} map)
string(REGEX REPLACE "/\\*[^*]*\\*+([^/*][^*]*\\*+)*/" "" map "${map}")
string(REPLACE ";" "," map "${map}") # ';' separates CMake list items
string(REGEX MATCHALL "{[^}]*}" blocks "${map}")
set(want "")
foreach(b IN LISTS blocks)
	string(REGEX REPLACE "local:.*" "" b "${b}")
	string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*[ \t]*," names "${b}")
	foreach(n IN LISTS names)
		string(REGEX REPLACE "[ \t]*,$" "" n "${n}")
		list(APPEND want ${n})
	endforeach()
endforeach()

set(bad "")
foreach(s IN LISTS have)
	if(NOT s MATCHES "${NAMES}")
		list(APPEND bad "exported but not matching ${NAMES}: ${s}")
	elseif(NOT s IN_LIST want)
		list(APPEND bad "exported but not in ${MAP}: ${s}")
	endif()
endforeach()
foreach(s IN LISTS want)
	if(NOT s IN_LIST have)
		list(APPEND bad "in ${MAP} but not exported: ${s}")
	endif()
endforeach()
list(LENGTH have nhave)
if(bad)
	list(JOIN bad "\n  " msg)
	message(FATAL_ERROR "${LIB}: ${nhave} symbols defined\n  ${msg}")
endif()
message(STATUS "${LIB}: exports exactly the ${nhave} symbols of ${MAP}")
