#include "rank_check.h"

void PrintTo(slimecclResult_t result, std::ostream* os) { *os << slimeccl_test::resultName(result); }

namespace slimeccl_test {

std::string resultName(slimecclResult_t result) {
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

std::string lastErrorText(slimecclComm_t comm) {
  const char* text = slimecclGetLastError(comm);
  return text == nullptr ? "(null)" : text;
}

void failRank(const char* file, int line, const std::string& what) {
  throw RankFailure(concat(file, ":", line, ": ", what));
}

void checkResult(slimecclResult_t expected, slimecclResult_t actual, const char* call, slimecclComm_t comm,
                 const char* file, int line) {
  if (actual == expected) return;
  failRank(file, line,
           concat(call, " returned ", resultName(actual), ", expected ", resultName(expected),
                  "; last error: ", lastErrorText(comm)));
}

}  // namespace slimeccl_test
