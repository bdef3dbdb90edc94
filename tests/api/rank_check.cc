#include "rank_check.h"

void PrintTo(slimecclResult_t result, std::ostream* os) { *os << slimeccl_test::result_name(result); }

namespace slimeccl_test {

std::string result_name(slimecclResult_t result) {
  switch (result) {
    case slimecclSuccess: return "slimecclSuccess";
    case slimecclUnhandledDeviceError: return "slimecclUnhandledDeviceError";
    case slimecclSystemError: return "slimecclSystemError";
    case slimecclInternalError: return "slimecclInternalError";
    case slimecclInvalidArgument: return "slimecclInvalidArgument";
    case slimecclInvalidUsage: return "slimecclInvalidUsage";
    case slimecclRemoteError: return "slimecclRemoteError";
    case slimecclInProgress: return "slimecclInProgress";
    case slimecclTimeout: return "slimecclTimeout";
    case slimecclNumResults: break;
  }
  return concat("result ", static_cast<int>(result));
}

std::string last_error_text(slimecclComm_t comm) {
  const char* text = slimecclGetLastError(comm);
  return text == nullptr ? "(null)" : text;
}

void fail_rank(const char* file, int line, const std::string& what) {
  throw RankFailure(concat(file, ":", line, ": ", what));
}

void check_result(slimecclResult_t expected, slimecclResult_t actual, const char* call, slimecclComm_t comm,
                  const char* file, int line) {
  if (actual == expected) return;
  fail_rank(file, line,
            concat(call, " returned ", result_name(actual), ", expected ", result_name(expected),
                   "; last error: ", last_error_text(comm)));
}

}  // namespace slimeccl_test
