#include "net/ib/ib_qp.h"

#include <algorithm>
#include <cstring>

#include "net/ib/ib_params.h"
#include "src/base/error.h"

namespace slimeccl {

slimecclResult_t createQp(const IbDevice& dev, ibv_cq* cq, const QpShape& shape, ibv_qp** out,
                          uint32_t* grantedInline) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = shape.sendDepth;
  init.cap.max_recv_wr = shape.recvDepth;
  init.cap.max_send_sge = 2;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = shape.maxInline;
  ibv_qp* qp = ibv_create_qp(dev.pd, &init);
  if (qp == nullptr)
    return fail(slimecclSystemError, "ib: cannot create a queue pair on {} ({} send, {} receive, {} inline bytes): {}",
                dev.port.device, shape.sendDepth, shape.recvDepth, shape.maxInline, strerror(errno));
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = dev.port.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) {
    ibv_destroy_qp(qp);
    return fail(slimecclSystemError, "ib: cannot move a queue pair on {} to INIT: {}", dev.port.device, strerror(rc));
  }
  *grantedInline = init.cap.max_inline_data;
  *out = qp;
  return slimecclSuccess;
}

slimecclResult_t connectQp(ibv_qp* qp, const IbDevice& dev, uint32_t localPsn, const IbSetup& peer, int index) {
  const IbParams& params = ibParams();
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = std::min(dev.port.activeMtu, static_cast<ibv_mtu>(peer.mtu));
  rtr.dest_qp_num = peer.qpn[index];
  rtr.rq_psn = peer.psn;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  rtr.ah_attr.port_num = dev.port.port;
  rtr.ah_attr.sl = params.serviceLevel;
  if (dev.port.linkLayer == IBV_LINK_LAYER_ETHERNET) {
    rtr.ah_attr.is_global = 1;
    memcpy(rtr.ah_attr.grh.dgid.raw, peer.gid, sizeof(peer.gid));
    rtr.ah_attr.grh.sgid_index = dev.port.gidIndex;
    rtr.ah_attr.grh.hop_limit = 255;
    rtr.ah_attr.grh.traffic_class = params.trafficClass;
  } else {
    rtr.ah_attr.dlid = peer.lid;
  }
  int rc = ibv_modify_qp(qp, &rtr,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0)
    return fail(slimecclSystemError, "ib: cannot move a queue pair on {} to RTR facing {} QP {:#x}: {}",
                dev.port.device, peer.device, peer.qpn[index], strerror(rc));
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = params.timeout;
  rts.retry_cnt = params.retryCount;
  rts.rnr_retry = 7;
  rts.sq_psn = localPsn;
  rts.max_rd_atomic = 1;
  rc = ibv_modify_qp(
      qp, &rts,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0)
    return fail(slimecclSystemError, "ib: cannot move a queue pair on {} to RTS: {}", dev.port.device, strerror(rc));
  return slimecclSuccess;
}

}  // namespace slimeccl
