# SPDX-License-Identifier: MIT
# cmake -DPROG=stream_random -DWORKDIR=dir -P test_stream_random.cmake
cmake_minimum_required(VERSION 3.25)

# 300000 bytes: 73 pages of 4 KiB and a short last one.
set(data ${WORKDIR}/stream_random.data)
string(REPEAT "a read stream walks these pages in a random order.\n" 6000 text)
string(SUBSTRING "${text}" 0 300000 text)
file(WRITE ${data} "${text}")

execute_process(COMMAND ${PROG} ${data} 2000 RESULT_VARIABLE rc
	OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("stream_random ${data} 2000: exit ${rc}\n${out}${err}")
set(want "^ok 2000 pages, [1-9][0-9]* distinct\nreads [1-9][0-9]* read_pages [1-9][0-9]*\n$")
if(NOT rc EQUAL 0 OR NOT out MATCHES "${want}")
	message(FATAL_ERROR "expected exit 0 and output matching\n  ${want}")
endif()
file(REMOVE ${data})
