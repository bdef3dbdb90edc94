// Error reporting: internal functions return slimecclResult_t and leave the sentence that explains
// the failure in a per-thread slot; the API boundary copies it to the communicator (and to the
// per-thread "last error" read by slimecclGetLastError(NULL)).
#pragma once

#include <fmt/format.h>

#include <string>

#include "include/slimeccl.h"
#include "src/base/log.h"

namespace slimeccl {

// Records sentence as the calling thread's pending error and returns code.
slimecclResult_t setError(slimecclResult_t code, std::string sentence);

template <typename... Args>
slimecclResult_t fail(slimecclResult_t code, fmt::format_string<Args...> format, Args&&... args) {
  return setError(code, fmt::format(format, std::forward<Args>(args)...));
}

// The calling thread's most recent error sentence ("" when none).
const std::string& threadError();
void clearThreadError();
// Adds context in front of the pending sentence, e.g. "rank 3: AllGather seq 7: " + cause.
void prefixThreadError(const std::string& prefix);

void traceCheckFailure(const char* file, int line, const char* expr, slimecclResult_t code);

}  // namespace slimeccl

#define SLIMECCL_CHECK(expr)                                                   \
  do {                                                                         \
    slimecclResult_t check_result_ = (expr);                                   \
    if (check_result_ != slimecclSuccess) {                                    \
      ::slimeccl::traceCheckFailure(__FILE__, __LINE__, #expr, check_result_); \
      return check_result_;                                                    \
    }                                                                          \
  } while (0)
