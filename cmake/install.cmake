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

# `cpack` in the build folder makes Debian packages (docs/install.md): slimeccl_<version>_<arch>.deb
# with everything above under /usr, its dependencies found by dpkg-shlibdeps, and, where the torch
# backend was built, slimeccl-torch_<version>_<arch>.deb with it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME slimeccl)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "collective communication library with an NCCL-shaped C API")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "slimeccl developers")
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_NAME slimeccl)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENT_LIBRARY_DESCRIPTION "slimeccl: the library, its headers, CMake package and pkg-config file, the
 launcher and tools, the NCCL-compatible libnccl.so.2 (under /usr/lib/slimeccl/nccl), the
 Python package and the docs.")
if(TARGET slimeccl_python_torch)
  set(CPACK_DEBIAN_TORCH_PACKAGE_NAME slimeccl-torch)
  # Its libslimeccl.so.0 is the other package's, which dpkg-shlibdeps cannot know of: named here.
  set(CPACK_DEBIAN_TORCH_PACKAGE_DEPENDS "slimeccl (= ${PROJECT_VERSION}), python3-torch")
  set(CPACK_COMPONENT_TORCH_DESCRIPTION "slimeccl's torch.distributed backend: import slimeccl.torch, then
 init_process_group(\"slimeccl\").")
endif()
include(CPack)
