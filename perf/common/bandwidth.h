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

}  // namespace slimeccl_perf
