#include "common/bandwidth.h"

namespace slimeccl_perf {

double algBandwidthGBs(size_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / 1.0e9 / seconds;
}

double allGatherBusBwFactor(int nranks) { return static_cast<double>(nranks - 1) / static_cast<double>(nranks); }

double sendRecvBusBwFactor(int) { return 1.0; }

}  // namespace slimeccl_perf
