# Fails the build when a file of the library includes a header of a floor above its own: the
# floors of cmake/floors_list.cmake (docs/architecture.md). Each floor's library compiles against
# its floors only (cmake/floors.cmake), so a source file that points up fails to compile; this
# check also reads the headers, and names every file and header at once. Run as
#   cmake -DROOT=<source dir> -DSTAMP=<file> -P cmake/check_layers.cmake
include(${CMAKE_CURRENT_LIST_DIR}/floors_list.cmake)

file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/src/*" "${ROOT}/net/*" "${ROOT}/topo/*" "${ROOT}/algorithms/*")
list(FILTER files INCLUDE REGEX "\\.(h|cc|cu|cuh)$")
set(wrong "")
foreach(file IN LISTS files)
  slimeccl_floor_of("${file}" own)
  file(STRINGS "${ROOT}/${file}" includes REGEX "^#include \"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    slimeccl_floor_of("${header}" theirs)
    if(theirs GREATER own)
      list(GET SLIMECCL_FLOORS ${own} ownName)
      list(GET SLIMECCL_FLOORS ${theirs} theirName)
      string(APPEND wrong "  ${file} (${ownName}) includes ${header} (${theirName})\n")
    endif()
  endforeach()
endforeach()
if(wrong)
  message(FATAL_ERROR "includes that point up the floors of docs/architecture.md:\n${wrong}")
endif()
file(WRITE "${STAMP}" "")
