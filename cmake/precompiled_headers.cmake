# The standard, fmt and GoogleTest headers that most files include take about two thirds of each
# file's compile time. Precompiled once per kind of target and reused by every C++ target of that
# kind, they are parsed a few times per build instead of once per file.
#
# Three kinds, because a header is precompiled for one set of flags and definitions: the library's
# objects (-fPIC, hidden visibility, fmt's and the build settings' definitions), programs (-fPIE)
# and the tests (-fPIE, tests/' -O1 -g1, GoogleTest's definitions). GCC ignores a precompiled header
# that a file's flags do not match and parses the headers instead, so the choice changes compile
# time, never the objects. Clang refuses such a header, so with clang (the fuzz and naming trees)
# only the library's objects, whose flags are alike by construction, share one.
option(SLIMECCL_PRECOMPILED_HEADERS "Precompile the common system headers once per kind of target" ON)

set(_slimeccl_pch_std <algorithm> <atomic> <chrono> <cstddef> <cstdint> <cstdio> <cstring> <functional> <map>
  <memory> <mutex> <optional> <string> <string_view> <thread> <vector>)

# A target that only carries a precompiled header for others: kind is library, program or test.
# Programs and tests link fmt or not, so theirs leaves fmt out (a definition fmt's header reads
# would otherwise have to match).
function(slimeccl_pch_donor kind)
  if(NOT SLIMECCL_PRECOMPILED_HEADERS OR NOT (kind STREQUAL "library" OR CMAKE_CXX_COMPILER_ID STREQUAL "GNU"))
    return()
  endif()
  set(anchor ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cc)
  # Its program stays in its own folder, away from the build's bin/.
  set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  if(kind STREQUAL "library")
    add_library(slimeccl_pch_${kind} OBJECT ${anchor})
    target_link_libraries(slimeccl_pch_${kind} PRIVATE slimeccl_build_settings slimeccl_dependencies)
    set_target_properties(slimeccl_pch_${kind} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    target_precompile_headers(slimeccl_pch_${kind} PRIVATE ${_slimeccl_pch_std} <fmt/format.h>)
  elseif(kind STREQUAL "test")
    add_executable(slimeccl_pch_${kind} ${anchor})
    target_link_libraries(slimeccl_pch_${kind} PRIVATE GTest::gtest)
    target_precompile_headers(slimeccl_pch_${kind} PRIVATE ${_slimeccl_pch_std} <gtest/gtest.h>)
  else()
    add_executable(slimeccl_pch_${kind} ${anchor})
    target_precompile_headers(slimeccl_pch_${kind} PRIVATE ${_slimeccl_pch_std})
  endif()
endfunction()

function(_slimeccl_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _slimeccl_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Every target whose sources are all C++ reuses its kind's precompiled header, where that kind has
# a donor: the library's floors the library donor's, programs under tests/ the test donor's, other
# programs the program donor's. The Python modules (pybind11's and libtorch's flags) and the tests'
# helper libraries compile alone.
function(slimeccl_share_precompiled_headers)
  _slimeccl_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(sources ${target} SOURCES)
    get_target_property(dir ${target} SOURCE_DIR)
    if(target MATCHES "^slimeccl_pch_" OR NOT sources OR dir MATCHES "^${PROJECT_SOURCE_DIR}/python(/|$)")
      continue()
    endif()
    list(FILTER sources EXCLUDE REGEX "\\.(cc|cpp|h)$")
    if(sources)
      continue()
    endif()
    if(type STREQUAL "EXECUTABLE" AND dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)")
      set(kind test)
    elseif(type STREQUAL "EXECUTABLE")
      set(kind program)
    elseif(target MATCHES "^slimeccl_floor_")
      set(kind library)
    else()
      continue()
    endif()
    if(TARGET slimeccl_pch_${kind})
      target_precompile_headers(${target} REUSE_FROM slimeccl_pch_${kind})
    endif()
  endforeach()
endfunction()
