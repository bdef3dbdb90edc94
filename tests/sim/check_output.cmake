# Runs slimeccl-sim (SIM) with the arguments in ARGS and fails unless it exits 0 and its output
# contains every line in EXPECT.
execute_process(COMMAND ${SIM} ${ARGS} OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status)
string(REPLACE ";" " " command "slimeccl-sim ${ARGS}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${command} exited with ${status}:\n${output}${errors}")
endif()
foreach(line IN LISTS EXPECT)
  string(FIND "${output}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${command} printed no line '${line}':\n${output}")
  endif()
endforeach()
