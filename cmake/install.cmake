# What `cmake --install` puts under the prefix (docs/install.md): the library with its header, the
# CMake package (find_package(slimeccl), target slimeccl::slimeccl) and slimeccl.pc, the launcher
# and tools, the NCCL-compatible library as an NCCL_HOME of its own, and the docs.
include(CMakePackageConfigHelpers)

set(SLIMECCL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/slimeccl)
install(TARGETS slimeccl EXPORT slimecclTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/slimeccl.h ${PROJECT_SOURCE_DIR}/include/slimeccl_net.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT slimecclTargets NAMESPACE slimeccl:: DESTINATION ${SLIMECCL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/slimecclConfig.cmake.in
  ${PROJECT_BINARY_DIR}/slimecclConfig.cmake INSTALL_DESTINATION ${SLIMECCL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/slimecclConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/slimecclConfig.cmake ${PROJECT_BINARY_DIR}/slimecclConfigVersion.cmake
  DESTINATION ${SLIMECCL_CMAKE_DIR})
# Relative to the .pc file, so an install moved or made with --prefix stays right.
file(RELATIVE_PATH SLIMECCL_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" SLIMECCL_PC_TO_PREFIX "${SLIMECCL_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/slimeccl.pc.in ${PROJECT_BINARY_DIR}/slimeccl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/slimeccl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS slimeccl-run slimeccl-info slimeccl-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# NCCL's layout under one folder, so that NCCL_HOME can point at it (docs/nccl.md): it does not
# shadow a system NCCL unless asked to.
set(SLIMECCL_NCCL_HOME ${CMAKE_INSTALL_LIBDIR}/slimeccl/nccl)
install(TARGETS nccl_compat LIBRARY DESTINATION ${SLIMECCL_NCCL_HOME}/lib)
install(FILES ${PROJECT_SOURCE_DIR}/include/nccl.h DESTINATION ${SLIMECCL_NCCL_HOME}/include)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
