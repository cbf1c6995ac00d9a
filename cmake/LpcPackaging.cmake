# SPDX-License-Identifier: MIT
#
# LpcPackaging.cmake - `cmake --install` rules for lpc, included at the end of
# the top-level CMakeLists.txt:
#   lib/liblpc.so* (shared, only the API of src/lpc.map exported), lib/liblpc.a,
#   include/lpc/*.h, share/man/man3 and man7, lib/pkgconfig/lpc.pc,
#   lib/cmake/lpc/ (find_package(lpc):
#   targets lpc::lpc and lpc::lpc_static);
# and the test `packaging.exports`: liblpc.so defines exactly the symbols that
# src/lpc.map makes global, all of them named lpc_*.
include(CMakePackageConfigHelpers)

install(TARGETS lpc lpc_static EXPORT lpcTargets
	LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
	ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
	RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
	INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lpc
	DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
	FILES_MATCHING PATTERN "*.h")

# pkg-config.  The prefix is only known at install time (`cmake --install
# --prefix DIR` overrides CMAKE_INSTALL_PREFIX then), so lpc.pc.in is filled in
# twice: now with everything but the prefix, and by the install script with it.
set(LPC_PC_PREFIX "@LPC_PC_PREFIX@")
foreach(d LIBDIR INCLUDEDIR)
	if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
		set(LPC_PC_${d} "${CMAKE_INSTALL_${d}}")
	else()
		set(LPC_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
	endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/lpc.pc.in ${PROJECT_BINARY_DIR}/lpc.pc.in @ONLY)
install(CODE "
	set(LPC_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
	configure_file(\"${PROJECT_BINARY_DIR}/lpc.pc.in\" \"${PROJECT_BINARY_DIR}/lpc.pc\" @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/lpc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: find_package(lpc) then target_link_libraries(x lpc::lpc).
set(LPC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lpc)
install(EXPORT lpcTargets NAMESPACE lpc:: DESTINATION ${LPC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lpcConfig.cmake.in
	${PROJECT_BINARY_DIR}/lpcConfig.cmake INSTALL_DESTINATION ${LPC_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lpcConfigVersion.cmake
	COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lpcConfig.cmake ${PROJECT_BINARY_DIR}/lpcConfigVersion.cmake
	DESTINATION ${LPC_CMAKE_DIR})

add_test(NAME packaging.exports
	COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:lpc> -DMAP=${PROJECT_SOURCE_DIR}/src/lpc.map
		-DNM=${CMAKE_NM} -P ${PROJECT_SOURCE_DIR}/cmake/check_exports.cmake)
set_tests_properties(packaging.exports PROPERTIES TIMEOUT 60 LABELS packaging)

# Man pages: one man3 page per exported function of every library (or a .so
# link to the page that covers it), lpc(7) and lpc_sqlite(7), all installed
# (liblpc_sqlite's and liblpc_rbd's pages too: they go with lpc.h's
# package, liblpc-dev).  `docs.man` renders each without a warning and
# checks that every global symbol of every version script under src/
# (src/lpc.map, src/sqlite/lpc_sqlite.map, src/rbd/lpc_rbd.map) has its page
# (scripts/check-man.sh, given no map: it finds them).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/man/man3 ${PROJECT_SOURCE_DIR}/man/man7
	DESTINATION ${CMAKE_INSTALL_MANDIR})
add_test(NAME docs.man
	COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-man.sh ${PROJECT_SOURCE_DIR}/man)
set_tests_properties(docs.man PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS "docs;packaging")
