# SPDX-License-Identifier: MIT
# cmake -DPROG=read_file -DWORKDIR=dir -P test_read_file.cmake
cmake_minimum_required(VERSION 3.25)

# 12345 bytes: three 4 KiB pages and 57 bytes of a fourth.
set(data ${WORKDIR}/read_file.data)
set(size 12345)
string(REPEAT "lpc reads this file through its page cache.\n" 300 text)
string(SUBSTRING "${text}" 0 ${size} text)
file(WRITE ${data} "${text}")

# Adler-32 of the file, byte by byte.
file(READ ${data} hex HEX)
string(REGEX MATCHALL ".." bytes "${hex}")
set(a 1)
set(b 0)
foreach(x IN LISTS bytes)
	math(EXPR a "(${a} + 0x${x}) % 65521")
	math(EXPR b "(${b} + ${a}) % 65521")
endforeach()
math(EXPR sum "(${b} << 16) | ${a}" OUTPUT_FORMAT HEXADECIMAL)
string(REGEX REPLACE "^0x" "" sum "${sum}")
string(LENGTH "${sum}" len)
while(len LESS 8)
	set(sum "0${sum}")
	math(EXPR len "${len} + 1")
endwhile()

execute_process(COMMAND ${PROG} ${data} RESULT_VARIABLE rc
	OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("read_file ${data}: exit ${rc}\n${out}${err}")
set(want "^${size} bytes, adler32 ${sum}\nhits [0-9]+ misses [1-9][0-9]*\n$")
if(NOT rc EQUAL 0 OR NOT out MATCHES "${want}")
	message(FATAL_ERROR "expected exit 0 and output matching\n  ${want}")
endif()

execute_process(COMMAND ${PROG} ${WORKDIR}/no-such-file RESULT_VARIABLE rc
	OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("read_file no-such-file: exit ${rc}\n${out}${err}")
if(rc EQUAL 0 OR NOT err MATCHES "no-such-file: No such file or directory")
	message(FATAL_ERROR "expected a failure reported as ENOENT")
endif()
file(REMOVE ${data})
