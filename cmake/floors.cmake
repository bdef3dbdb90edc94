# One object library per floor of cmake/floors_list.cmake, slimeccl_floor_<name>, each compiled
# against a view of the source tree that holds its own floor and those below it and nothing else:
# a folder of symbolic links in the build tree (floor_<name>), its one private include folder. The
# library's files include by path from the source root ("src/base/error.h"), so an include that
# points up a floor finds no such file and fails to compile.
include(${CMAKE_CURRENT_LIST_DIR}/floors_list.cmake)

# Links `folder` of the source tree into `view`. Where a floor above `level` holds a folder inside
# it, or the view already has it as a folder (a lower floor's folder lies inside), links its
# entries one by one instead, and leaves out those of floors above.
function(_slimeccl_view_folder view folder level)
  set(at "${view}/${folder}")
  if(IS_SYMLINK "${at}")
    return()
  endif()
  set(split FALSE)
  if(IS_DIRECTORY "${at}")
    set(split TRUE)
  endif()
  set(index 0)
  foreach(floor IN LISTS SLIMECCL_FLOORS)
    if(index GREATER level)
      foreach(above IN LISTS SLIMECCL_FLOOR_${floor})
        string(FIND "${above}/" "${folder}/" found)
        if(found EQUAL 0)
          set(split TRUE)
        endif()
      endforeach()
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  if(NOT split)
    get_filename_component(parent "${at}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${at}" SYMBOLIC)
    return()
  endif()
  file(MAKE_DIRECTORY "${at}")
  # A new entry there configures the tree again, and so comes into the view.
  file(GLOB entries CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/${folder}/*")
  foreach(entry IN LISTS entries)
    slimeccl_floor_of("${entry}" entryLevel)
    if(NOT entryLevel GREATER level)
      _slimeccl_view_folder("${view}" "${entry}" ${level})
    endif()
  endforeach()
endfunction()

# The view of floor number `level` (floor_<name> in the build tree), made afresh. Its name is no
# folder name of the source tree, which .clang-tidy's header filter looks for in paths.
function(slimeccl_floor_view level out)
  list(GET SLIMECCL_FLOORS ${level} name)
  set(view "${PROJECT_BINARY_DIR}/floor_${name}")
  # Removing a tree removes its links, never what they point to.
  file(REMOVE_RECURSE "${view}")
  file(MAKE_DIRECTORY "${view}")
  foreach(index RANGE ${level})
    list(GET SLIMECCL_FLOORS ${index} floor)
    foreach(folder IN LISTS SLIMECCL_FLOOR_${floor})
      _slimeccl_view_folder("${view}" "${folder}" ${level})
    endforeach()
  endforeach()
  set(${out} "${view}" PARENT_SCOPE)
endfunction()

# The library's C++ sources on floor number `level`: every .cc under its folders that no other
# floor claims.
function(slimeccl_floor_sources level out)
  list(GET SLIMECCL_FLOORS ${level} name)
  set(sources "")
  foreach(folder IN LISTS SLIMECCL_FLOOR_${name})
    file(GLOB_RECURSE found CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/${folder}/*.cc")
    foreach(file IN LISTS found)
      slimeccl_floor_of("${file}" fileLevel)
      if(fileLevel EQUAL level)
        list(APPEND sources "${PROJECT_SOURCE_DIR}/${file}")
      endif()
    endforeach()
  endforeach()
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()
