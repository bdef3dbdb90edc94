#include "compat/nccl/last_error.h"

namespace slimeccl_nccl {
namespace {
thread_local std::string refusal;
thread_local bool refusalIsLast = false;
}  // namespace

void recordRefusal(const std::string& sentence) {
  refusal = sentence;
  refusalIsLast = true;
}

void forgetRefusal() { refusalIsLast = false; }

const char* lastRefusal() { return refusalIsLast ? refusal.c_str() : nullptr; }

}  // namespace slimeccl_nccl
