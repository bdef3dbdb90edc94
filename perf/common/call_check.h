// A failed slimeccl call ends the run: the tools measure a working library, there is nothing to retry.
#pragma once

#include "slimeccl.h"

namespace slimeccl_perf {

// Prints "rank R: <function> failed: <error string>: <last error>" to stderr and exits with 1.
// comm may be null (before init), then the calling thread's last error is shown.
[[noreturn]] void failCall(int rank, const char* function, slimecclResult_t result, slimecclComm_t comm);

inline void checkCall(slimecclResult_t result, const char* function, int rank, slimecclComm_t comm) {
  if (result != slimecclSuccess) failCall(rank, function, result, comm);
}

}  // namespace slimeccl_perf

// Calls function(args...) and checks its result against a RankComm, naming the function on failure.
#define SLIMECCL_PERF_CALL(rankComm, function, ...) (rankComm).check(function(__VA_ARGS__), #function)
