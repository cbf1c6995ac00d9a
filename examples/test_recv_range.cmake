# SPDX-License-Identifier: MIT
# cmake -DPROG=recv_range -DWORKDIR=dir -P test_recv_range.cmake
cmake_minimum_required(VERSION 3.25)

# Sizes and offsets that cross pages and chunks, end inside a page, start
# unaligned, and leave a hole before the upload.
set(data ${WORKDIR}/recv_range.data)
foreach(args "300001" "1" "4096;4096" "1048576;12345" "65537;300000")
	execute_process(COMMAND ${PROG} ${data} ${args} RESULT_VARIABLE rc
		OUTPUT_VARIABLE out ERROR_VARIABLE err)
	message("recv_range ${args}: exit ${rc}\n${out}${err}")
	if(NOT rc EQUAL 0 OR NOT out MATCHES "\nok\n$" OR out MATCHES "MISMATCH")
		message(FATAL_ERROR "expected exit 0, no MISMATCH and a last line 'ok'")
	endif()
endforeach()
file(REMOVE ${data})
