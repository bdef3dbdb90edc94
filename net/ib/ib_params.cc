#include "net/ib/ib_params.h"

#include <algorithm>

#include "src/base/param.h"

namespace slimeccl {

const IbParams& ibParams() {
  static const IbParams params = [] {
    IbParams p;
    p.hca = envString("SLIMECCL_IB_HCA");
    p.gidIndex = static_cast<int>(envInt("SLIMECCL_IB_GID_INDEX", -1));
    p.qpsPerConn = static_cast<int>(std::clamp<int64_t>(envInt("SLIMECCL_IB_QPS_PER_CONN", 1), 1, kIbMaxQpsPerConn));
    p.eagerBytes = std::min<size_t>(envBytes("SLIMECCL_IB_EAGER_BYTES", 16 * 1024), 1 << 20);
    // 18: 1.07 s before a retransmission. Spurious ones (a stalled vCPU under soft-RoCE, a congested
    // fabric) cost a go-back-N resend of the whole window, and soft-RoCE mishandles some of them.
    p.timeout = static_cast<int>(std::clamp<int64_t>(envInt("SLIMECCL_IB_TIMEOUT", 18), 1, 31));
    p.retryCount = static_cast<int>(std::clamp<int64_t>(envInt("SLIMECCL_IB_RETRY_CNT", 7), 0, 7));
    p.trafficClass = static_cast<int>(std::clamp<int64_t>(envInt("SLIMECCL_IB_TC", 0), 0, 255));
    p.serviceLevel = static_cast<int>(std::clamp<int64_t>(envInt("SLIMECCL_IB_SL", 0), 0, 15));
    p.mrCacheEntries = envBytes("SLIMECCL_IB_MR_CACHE", 128, 0, kIbMaxMrCacheEntries);
    return p;
  }();
  return params;
}

}  // namespace slimeccl
