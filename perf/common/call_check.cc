#include "common/call_check.h"

#include <cstdio>
#include <cstdlib>

namespace slimeccl_perf {

void failCall(int rank, const char* function, slimecclResult_t result, slimecclComm_t comm) {
  const char* errorString = slimecclGetErrorString(result);
  const char* lastError = slimecclGetLastError(comm);
  std::fflush(stdout);
  std::fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, function, errorString ? errorString : "unknown error",
               lastError ? lastError : "");
  std::fflush(stderr);
  // Other rank threads may still be inside the library: leave without running destructors.
  std::_Exit(1);
}

}  // namespace slimeccl_perf
