// What a fuzz target states must hold; a violation aborts, which libFuzzer reports as a crash and
// saves the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_REQUIRE(cond, what)                                                       \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "fuzz: %s:%d: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)
