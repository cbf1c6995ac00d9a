# SPDX-License-Identifier: MIT
# cmake -DPROG=serve_range -DWORKDIR=dir -P test_serve_range.cmake
cmake_minimum_required(VERSION 3.25)

# 300,001 bytes: 73 pages and a bit, so ranges cross pages, chunks and EOF.
set(data ${WORKDIR}/serve_range.data)
string(REPEAT "serve_range sends this file from pinned pages, no copy.\n" 5400 text)
string(SUBSTRING "${text}" 0 300001 text)
file(WRITE ${data} "${text}")

foreach(args "" "0:300001;299990:100;12345:67890;4096:4096;300001:1")
	execute_process(COMMAND ${PROG} ${data} ${args} RESULT_VARIABLE rc
		OUTPUT_VARIABLE out ERROR_VARIABLE err)
	message("serve_range ${args}: exit ${rc}\n${out}${err}")
	if(NOT rc EQUAL 0 OR NOT out MATCHES "\nok\n$" OR out MATCHES "MISMATCH")
		message(FATAL_ERROR "expected exit 0, no MISMATCH and a last line 'ok'")
	endif()
endforeach()
file(REMOVE ${data})
