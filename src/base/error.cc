#include "src/base/error.h"

#include "src/base/util/per_thread.h"

namespace slimeccl {
namespace {

struct PendingError {
  std::string sentence;
};
std::string& pendingError() { return perThread<PendingError>().sentence; }

}  // namespace

slimecclResult_t setError(slimecclResult_t code, std::string sentence) {
  pendingError() = std::move(sentence);
  return code;
}

const std::string& threadError() { return pendingError(); }

void clearThreadError() { pendingError().clear(); }

void prefixThreadError(const std::string& prefix) {
  std::string& error = pendingError();
  error = prefix + error;
}

void traceCheckFailure(const char* file, int line, const char* expr, slimecclResult_t code) {
  SLIMECCL_TRACE(kLogAll, -1, "{}:{} {} -> {} ({})", file, line, expr, static_cast<int>(code), pendingError());
}

}  // namespace slimeccl
