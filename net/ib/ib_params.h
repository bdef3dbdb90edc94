// SLIMECCL_IB_* settings, read once per process (as the other net-module settings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimeccl {

struct IbParams {
  std::string hca;        // SLIMECCL_IB_HCA: devices (and ports) to use, NCCL_IB_HCA syntax
  int gidIndex;           // SLIMECCL_IB_GID_INDEX: -1 chooses (RoCE v2, IPv4-mapped first)
  int qpsPerConn;         // SLIMECCL_IB_QPS_PER_CONN: queue pairs of a data connection
  size_t eagerBytes;      // SLIMECCL_IB_EAGER_BYTES: messages up to this size skip the rendezvous
  int timeout;            // SLIMECCL_IB_TIMEOUT: RC ack timeout exponent (4.096 us * 2^timeout)
  int retryCount;         // SLIMECCL_IB_RETRY_CNT
  int trafficClass;       // SLIMECCL_IB_TC
  int serviceLevel;       // SLIMECCL_IB_SL
  size_t mrCacheEntries;  // SLIMECCL_IB_MR_CACHE: cached registrations; 0 registers per message
};

const IbParams& ibParams();

constexpr int kIbMaxQpsPerConn = 16;
constexpr size_t kIbMaxMrCacheEntries = 1 << 20;

}  // namespace slimeccl
