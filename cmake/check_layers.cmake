# Fails the build when a file of the library includes a header of a floor above its own: the
# floors of docs/architecture.md, from the ground up. Run as
#   cmake -DROOT=<source dir> -DSTAMP=<file> -P cmake/check_layers.cmake
# The first prefix that matches a path gives its floor.
set(FLOOR_PREFIXES include/ src/base/
  src/link/ src/bootstrap/ net/ topo/
  algorithms/
  src/api/ src/)
set(FLOOR_NUMBERS 0 0
  1 1 1 1
  2
  4 3)
set(FLOOR_NAMES ground net algorithms execution API)

function(floor_of path out)
  set(${out} -1 PARENT_SCOPE)
  list(LENGTH FLOOR_PREFIXES count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET FLOOR_PREFIXES ${i} prefix)
    string(FIND "${path}" "${prefix}" at)
    if(at EQUAL 0)
      list(GET FLOOR_NUMBERS ${i} floor)
      set(${out} ${floor} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/src/*" "${ROOT}/net/*" "${ROOT}/topo/*" "${ROOT}/algorithms/*")
list(FILTER files INCLUDE REGEX "\\.(h|cc|cu|cuh)$")
set(wrong "")
foreach(file IN LISTS files)
  floor_of("${file}" own)
  file(STRINGS "${ROOT}/${file}" includes REGEX "^#include \"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    floor_of("${header}" theirs)
    if(theirs GREATER own)
      list(GET FLOOR_NAMES ${own} ownName)
      list(GET FLOOR_NAMES ${theirs} theirName)
      string(APPEND wrong "  ${file} (${ownName}) includes ${header} (${theirName})\n")
    endif()
  endforeach()
endforeach()
if(wrong)
  message(FATAL_ERROR "includes that point up the floors of docs/architecture.md:\n${wrong}")
endif()
file(WRITE "${STAMP}" "")
