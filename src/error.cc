#include "src/error.h"

namespace slimeccl {
namespace {
thread_local std::string pendingError;
}

slimecclResult_t setError(slimecclResult_t code, std::string sentence) {
  pendingError = std::move(sentence);
  return code;
}

const std::string& threadError() { return pendingError; }

void clearThreadError() { pendingError.clear(); }

void prefixThreadError(const std::string& prefix) { pendingError = prefix + pendingError; }

void traceCheckFailure(const char* file, int line, const char* expr, slimecclResult_t code) {
  SLIMECCL_TRACE(kLogAll, -1, "{}:{} {} -> {} ({})", file, line, expr, static_cast<int>(code), pendingError);
}

}  // namespace slimeccl
