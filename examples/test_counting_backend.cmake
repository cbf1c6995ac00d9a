# SPDX-License-Identifier: MIT
# cmake -DPROG=counting_backend -DWORKDIR=dir -P test_counting_backend.cmake
cmake_minimum_required(VERSION 3.25)

# 41060 bytes: ten 4 KiB pages and 100 bytes of an eleventh.
set(data ${WORKDIR}/counting_backend.data)
set(size 41060)
file(REMOVE ${data})
execute_process(COMMAND ${PROG} ${data} ${size} RESULT_VARIABLE rc
	OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("counting_backend ${data}: exit ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "expected exit 0")
endif()

# What the backend saw: one fsync wrote the 11 dirty pages (in one run),
# synced once and cut the whole last page's tail back to the size with
# truncate; nothing was read (the pages were past the end: made, not read).
# The reader, over a new handle, read the 11 pages from the storage and
# wrote nothing; each handle was released once.
set(n "[1-9][0-9]*")
set(want "^wrote ${size} bytes, lpc_fsync ok\n"
	"after fsync: reads 0 \\(0 pages\\), writes ${n} \\(11 pages\\), syncs 1, truncates ${n}, sizes ${n}, released 0\n"
	"after close: reads 0 \\(0 pages\\), writes ${n} \\(11 pages\\), syncs 1, truncates ${n}, sizes ${n}, released 1\n"
	"read ${size} bytes back: equal\n"
	"reader: reads ${n} \\(11 pages\\), writes 0 \\(0 pages\\), syncs 0, truncates 0, sizes ${n}, released 1\n$")
string(CONCAT want ${want})
if(NOT out MATCHES "${want}")
	message(FATAL_ERROR "expected output matching\n  ${want}")
endif()

# The storage file holds exactly the text, and its size is lpc's.
file(SIZE ${data} got)
if(NOT got EQUAL size)
	message(FATAL_ERROR "the storage file is ${got} bytes, want ${size}")
endif()
string(REPEAT "lpc over a backend of its own.\n" 1400 text)
string(SUBSTRING "${text}" 0 ${size} text)
file(READ ${data} back)
if(NOT back STREQUAL text)
	message(FATAL_ERROR "the storage file's bytes differ from what was written")
endif()
file(REMOVE ${data})
