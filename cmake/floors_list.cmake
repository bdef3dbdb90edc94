# The floors of docs/architecture.md, from the ground up, and the folders (from the source root)
# each one holds. A path belongs to the floor of the longest folder that holds it, so `src` gives
# the execution floor what of src/ no other floor claims. Read by cmake/floors.cmake (one library
# per floor) and by cmake/check_layers.cmake.
set(SLIMECCL_FLOORS ground net algorithms execution api)
set(SLIMECCL_FLOOR_ground include src/base)
set(SLIMECCL_FLOOR_net src/link src/bootstrap net topo)
set(SLIMECCL_FLOOR_algorithms algorithms)
set(SLIMECCL_FLOOR_execution src)
set(SLIMECCL_FLOOR_api src/api)

# The floor (its index in SLIMECCL_FLOORS) of `path`, a file or folder from the source root; -1
# where no floor holds it.
function(slimeccl_floor_of path out)
  set(best -1)
  set(bestLength 0)
  set(index 0)
  foreach(floor IN LISTS SLIMECCL_FLOORS)
    foreach(folder IN LISTS SLIMECCL_FLOOR_${floor})
      string(LENGTH "${folder}/" length)
      string(FIND "${path}/" "${folder}/" at)
      if(at EQUAL 0 AND length GREATER bestLength)
        set(best ${index})
        set(bestLength ${length})
      endif()
    endforeach()
    math(EXPR index "${index} + 1")
  endforeach()
  set(${out} ${best} PARENT_SCOPE)
endfunction()
