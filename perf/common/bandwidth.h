// Bandwidth as nccl-tests reports it: algbw = bytes / time, busbw = algbw * a per-collective factor
// that makes busbw comparable with the link speed whatever the rank count (see nccl-tests' PERFORMANCE.md).
#pragma once

#include <cstddef>

namespace slimeccl_perf {

// GB/s with GB = 1e9 bytes; 0 when no time was measured.
double algBandwidthGBs(size_t bytes, double seconds);

// Each rank receives (n-1)/n of the gathered bytes.
double allGatherBusBwFactor(int nranks);
// One link carries the whole message.
double sendRecvBusBwFactor(int nranks);
// A reduce-scatter then an all-gather, each moving (n-1)/n of the vector through every rank: 2(n-1)/n.
double allReduceBusBwFactor(int nranks);
// Each rank sends (n-1)/n of the total send bytes (the size column).
double reduceScatterBusBwFactor(int nranks);
// The whole vector crosses the busiest link once.
double broadcastBusBwFactor(int nranks);
double reduceBusBwFactor(int nranks);
// Each rank keeps 1/n of its send bytes and sends the rest.
double allToAllBusBwFactor(int nranks);

}  // namespace slimeccl_perf
