#include "common/bandwidth.h"

namespace slimeccl_perf {

double algBandwidthGBs(size_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / 1.0e9 / seconds;
}

double allGatherBusBwFactor(int nranks) { return static_cast<double>(nranks - 1) / static_cast<double>(nranks); }

double sendRecvBusBwFactor(int) { return 1.0; }

double allReduceBusBwFactor(int nranks) { return 2.0 * allGatherBusBwFactor(nranks); }

double reduceScatterBusBwFactor(int nranks) { return allGatherBusBwFactor(nranks); }

double broadcastBusBwFactor(int) { return 1.0; }

double reduceBusBwFactor(int) { return 1.0; }

double allToAllBusBwFactor(int nranks) { return allGatherBusBwFactor(nranks); }

}  // namespace slimeccl_perf
