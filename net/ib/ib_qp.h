// Reliable-connected queue pairs: creation and the INIT -> RTR -> RTS moves.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "include/slimeccl.h"
#include "net/ib/ib_device.h"
#include "net/ib/ib_wire.h"

namespace slimeccl {

struct QpShape {
  uint32_t sendDepth;
  uint32_t recvDepth;
  uint32_t maxInline;  // asked for; the device may grant more
};

// Creates an RC QP on cq and moves it to INIT; *grantedInline is what the device allows inline.
slimecclResult_t createQp(const IbDevice& dev, ibv_cq* cq, const QpShape& shape, ibv_qp** out, uint32_t* grantedInline);
// RTR then RTS, facing the peer's QP number `index` of its setup record.
slimecclResult_t connectQp(ibv_qp* qp, const IbDevice& dev, uint32_t localPsn, const IbSetup& peer, int index);

}  // namespace slimeccl
