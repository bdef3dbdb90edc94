# The fuzz executables, for a clang build whose CMAKE_CXX_FLAGS carry
# -fsanitize=fuzzer-no-link,address,undefined (set by build_and_run.sh).
add_library(slimeccl_fuzz_support STATIC fake_root.cc socket_io.cc)
target_link_libraries(slimeccl_fuzz_support PUBLIC slimeccl_internal)

add_custom_target(slimeccl-fuzzers)
foreach(name ${SLIMECCL_FUZZ_TARGET_NAMES})
  add_executable(fuzz_${name} ${name}_fuzzer.cc)
  target_link_libraries(fuzz_${name} PRIVATE slimeccl_fuzz_support)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(slimeccl-fuzzers fuzz_${name})
endforeach()

add_executable(fuzz_make_corpus make_corpus.cc)
target_link_libraries(fuzz_make_corpus PRIVATE slimeccl_internal)
add_dependencies(slimeccl-fuzzers fuzz_make_corpus)
