# One ctest entry builds the fuzzers with clang (skipped, with the reason, when clang or its
# libFuzzer runtime is missing); one entry per target then fuzzes it for a bounded time.
set(SLIMECCL_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz target runs in the test suite")
set(_fuzz_script ${CMAKE_CURRENT_SOURCE_DIR}/build_and_run.sh)
set(_fuzz_tree ${CMAKE_BINARY_DIR}/fuzz-clang)

add_test(NAME fuzz.build COMMAND ${_fuzz_script} build ${_fuzz_tree})
# The clang build takes both cores, so nothing else runs beside it.
set_tests_properties(fuzz.build PROPERTIES LABELS fuzz TIMEOUT 1500 RUN_SERIAL ON
  SKIP_RETURN_CODE 77 FIXTURES_SETUP fuzz_build)

foreach(name ${SLIMECCL_FUZZ_TARGET_NAMES})
  add_test(NAME fuzz.${name} COMMAND ${_fuzz_script} run ${_fuzz_tree} ${name} ${SLIMECCL_FUZZ_SECONDS})
  set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT 300 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED fuzz_build)
endforeach()
