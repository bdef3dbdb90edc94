#include "src/overlap/gemm_threads.h"

#include <cblas.h>
#include <sched.h>

#include <algorithm>
#include <mutex>

#include "src/base/param.h"

namespace slimeccl {
namespace {

int usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int gemmThreads() {
  int64_t asked = envInt("SLIMECCL_GEMM_THREADS", 0);
  return asked > 0 ? static_cast<int>(std::min<int64_t>(asked, 1024)) : std::max(1, usableCpus() - 1);
}

}  // namespace

void applyGemmThreads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(gemmThreads()); });
}

}  // namespace slimeccl
