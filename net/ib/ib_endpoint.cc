#include "net/ib/ib_endpoint.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>

#include "net/ib/side_channel.h"
#include "src/base/error.h"
#include "src/base/log.h"
#include "src/base/sys/fd_io.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

// Unsignalled requests between two signalled ones on a queue pair: completions are what free
// send-queue entries and eager staging slots, so this stays well under both.
constexpr uint32_t kSignalEvery = 8;
constexpr int64_t kPeerCheckNs = 10 * 1000 * 1000;
constexpr uint64_t kRecvBit = 1ULL << 63;
constexpr uint64_t kSeqMask = (1ULL << 48) - 1;

uint64_t sendWrId(WrKind kind, int qp, uint64_t seq) {
  return (static_cast<uint64_t>(kind) << 56) | (static_cast<uint64_t>(qp) << 48) | (seq & kSeqMask);
}

const char* workName(WrKind kind) {
  switch (kind) {
    case WrKind::Eager: return "RDMA write of an eager message";
    case WrKind::Announce: return "RDMA write announcing a message";
    case WrKind::Record: return "RDMA write of a message size";
    case WrKind::Slice: return "RDMA write of a message";
    case WrKind::Final: return "RDMA write completing a message";
    case WrKind::Refused: return "RDMA write refusing a message";
    case WrKind::Control: return "send of a control message";
    case WrKind::Marker: return "RDMA write flushing the connection";
  }
  return "work request";
}

}  // namespace

IbEndpoint::IbEndpoint(IbDevice* dev, int rank, bool sender, ConnKind kind, int sideFd)
    : dev_(dev), cache_(dev->mrCache), rank_(rank), sender_(sender), kind_(kind), sideFd_(sideFd) {}

IbEndpoint::~IbEndpoint() {
  while (live_ != nullptr) {
    IbRequest* r = live_;
    live_ = r->nextLive;
    cache_->release(&r->mr);
    delete r;
  }
  for (IbRequest* r : freeRequests_) delete r;
  for (ibv_qp* qp : qps_) ibv_destroy_qp(qp);
  if (cq_ != nullptr) {
    if (unackedEvents_ > 0) ibv_ack_cq_events(cq_, unackedEvents_);
    ibv_destroy_cq(cq_);
  }
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
  if (regionMr_ != nullptr) ibv_dereg_mr(regionMr_);
  free(region_);
  if (sideFd_ >= 0) close(sideFd_);
}

slimecclResult_t IbEndpoint::createResources(const std::vector<QpShape>& shapes, size_t regionBytes) {
  const std::string& name = dev_->port.device;
  channel_ = ibv_create_comp_channel(dev_->context);
  if (channel_ == nullptr)
    return fail(slimecclSystemError, "ib: cannot create a completion channel on {}: {}", name, strerror(errno));
  setNonBlocking(channel_->fd);
  int cqDepth = 0;
  for (const QpShape& s : shapes) cqDepth += static_cast<int>(s.sendDepth + s.recvDepth);
  cq_ = ibv_create_cq(dev_->context, cqDepth, this, channel_, 0);
  if (cq_ == nullptr)
    return fail(slimecclSystemError, "ib: cannot create a completion queue of {} entries on {}: {}", cqDepth, name,
                strerror(errno));
  maxInline_ = UINT32_MAX;
  for (const QpShape& wanted : shapes) {
    // Devices refuse rather than shrink an inline size they cannot do: ask for less until one fits.
    ibv_qp* qp = nullptr;
    uint32_t granted = 0;
    slimecclResult_t rc = slimecclInternalError;
    for (uint32_t inlineBytes = wanted.maxInline; rc != slimecclSuccess && inlineBytes >= sizeof(CtrlMsg);
         inlineBytes /= 2) {
      QpShape shape = wanted;
      shape.maxInline = inlineBytes;
      rc = createQp(*dev_, cq_, shape, &qp, &granted);
    }
    if (rc != slimecclSuccess) return rc;
    qps_.push_back(qp);
    sq_.push_back(SendQueue{0, 0, 0, wanted.sendDepth});
    maxInline_ = std::min(maxInline_, granted);
  }
  regionBytes_ = regionBytes;
  if (posix_memalign(reinterpret_cast<void**>(&region_), 4096, regionBytes) != 0)
    return fail(slimecclSystemError, "ib: cannot allocate {} bytes for a connection", regionBytes);
  memset(region_, 0, regionBytes);
  regionMr_ = ibv_reg_mr(dev_->pd, region_, regionBytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (regionMr_ == nullptr)
    return fail(slimecclSystemError, "ib: cannot register {} bytes on {}: {}", regionBytes, name, strerror(errno));
  return slimecclSuccess;
}

void IbEndpoint::describeLocal() {
  std::random_device rd;
  local_.magic = kIbSetupMagic;
  local_.version = kIbSetupVersion;
  local_.rank = rank_;
  local_.kind = static_cast<uint32_t>(kind_);
  local_.qpCount = static_cast<uint32_t>(qps_.size());
  local_.psn = rd() & 0xffffff;
  for (size_t i = 0; i < qps_.size(); ++i) local_.qpn[i] = qps_[i]->qp_num;
  memcpy(local_.gid, dev_->port.gid.raw, sizeof(local_.gid));
  local_.lid = dev_->port.lid;
  local_.linkLayer = static_cast<uint8_t>(dev_->port.linkLayer);
  local_.mtu = static_cast<uint8_t>(dev_->port.activeMtu);
  snprintf(local_.device, sizeof(local_.device), "%s", dev_->port.device.c_str());
}

slimecclResult_t IbEndpoint::connectQps() {
  peer_.device[sizeof(peer_.device) - 1] = '\0';
  if (peer_.magic != kIbSetupMagic || peer_.version != kIbSetupVersion)
    return fail(slimecclRemoteError, "ib: the peer's setup record is not from this version of the ib module");
  if (peer_.qpCount != qps_.size())
    return fail(slimecclRemoteError, "ib: peer rank {} set up {} queue pairs where {} were agreed", peer_.rank,
                peer_.qpCount, qps_.size());
  if (peer_.linkLayer != local_.linkLayer)
    return fail(slimecclRemoteError, "ib: {} ({}) cannot reach peer rank {}'s {} ({})", local_.device,
                local_.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand", peer_.rank, peer_.device,
                peer_.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
  for (size_t i = 0; i < qps_.size(); ++i)
    SLIMECCL_CHECK(connectQp(qps_[i], *dev_, local_.psn, peer_, static_cast<int>(i)));
  return slimecclSuccess;
}

uint64_t IbEndpoint::post(int qp, SendWork* work, int count) {
  SendQueue& q = sq_[qp];
  for (int i = 0; i < count; ++i) {
    ibv_send_wr& wr = work[i].wr;
    wr.wr_id = sendWrId(work[i].kind, qp, q.posted + 1 + i);
    if (wr.num_sge > 0) wr.sg_list = work[i].sge;
    if (work[i].signaled || ++q.sinceSignal >= kSignalEvery) {
      wr.send_flags |= IBV_SEND_SIGNALED;
      q.sinceSignal = 0;
    }
    wr.next = i + 1 < count ? &work[i + 1].wr : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qps_[qp], &work[0].wr, &bad);
  if (rc != 0) {
    breakWith(slimecclSystemError, fmt::format("ib: posting a {} to {} QP {:#x} failed: {}", workName(work[0].kind),
                                               dev_->port.device, qps_[qp]->qp_num, strerror(rc)));
    return 0;
  }
  q.posted += count;
  return q.posted;
}

std::string IbEndpoint::peerName() const {
  if (peer_.magic != kIbSetupMagic) return "the peer";
  return fmt::format("peer rank {} ({})", peer_.rank, peer_.device);
}

std::string IbEndpoint::describeFailure(const ibv_wc& wc) const {
  std::string what = (wc.wr_id & kRecvBit) != 0 ? "receiving" : workName(static_cast<WrKind>((wc.wr_id >> 56) & 0x7f));
  return fmt::format("ib: {} between {} port {} (QP {:#x}) and {} failed: {} (status {}, vendor error {:#x})", what,
                     dev_->port.device, dev_->port.port, wc.qp_num, peerName(), ibv_wc_status_str(wc.status),
                     static_cast<int>(wc.status), wc.vendor_err);
}

void IbEndpoint::pollCompletions() {
  ibv_wc wc[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wc);
    if (n < 0) {
      breakWith(slimecclSystemError, fmt::format("ib: polling the completion queue on {} failed", dev_->port.device));
      return;
    }
    for (int i = 0; i < n; ++i) {
      sawCompletion_ = true;
      if (wc[i].status != IBV_WC_SUCCESS) {
        breakWith(slimecclRemoteError, describeFailure(wc[i]));
        continue;
      }
      if (broken()) continue;
      if ((wc[i].wr_id & kRecvBit) != 0) {
        onArrival(wc[i]);
        continue;
      }
      int qp = static_cast<int>((wc[i].wr_id >> 48) & 0xff);
      uint64_t seq = wc[i].wr_id & kSeqMask;
      sq_[qp].completed = std::max(sq_[qp].completed, seq);
      onSendDone(qp, seq);
    }
    if (n < 32) break;
  }
  if (!broken()) afterPoll();
}

// An event follows the first completion after arming; none can be waiting before that, so
// there is no read to pay for until a completion has been polled.
void IbEndpoint::drainEvents() {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(channel_, &cq, &context) == 0) {
    ++unackedEvents_;
    armed_ = false;
  }
  // Acknowledging takes a lock in the library: do it in batches.
  if (unackedEvents_ >= 64) {
    ibv_ack_cq_events(cq_, unackedEvents_);
    unackedEvents_ = 0;
  }
}

void IbEndpoint::checkPeer() {
  int64_t now = coarseNowNs();
  if (peerGone_ || now < nextPeekNs_) return;
  nextPeekNs_ = now + kPeerCheckNs;
  std::string why;
  SideState side = sidePeek(sideFd_, &why);
  if (side == SideState::Open) return;
  // What the peer sent before it left may still be in the completion queue.
  pollCompletions();
  if (broken()) return;
  size_t pending = pendingWork();
  if (pending == 0) {
    peerGone_ = true;
    return;
  }
  breakWith(slimecclRemoteError,
            fmt::format("ib: {} {} with {} message(s) outstanding on {} (did its process exit?)", peerName(),
                        side == SideState::Closed ? "closed the connection" : "lost the connection (" + why + ")",
                        pending, dev_->port.device));
}

void IbEndpoint::breakWith(slimecclResult_t code, std::string sentence) {
  if (state_ == State::Broken) return;
  state_ = State::Broken;
  error_ = code;
  errorText_ = std::move(sentence);
  SLIMECCL_INFO(kLogNet, rank_, "{}", errorText_);
}

slimecclResult_t IbEndpoint::refuseIfUnusable(bool alreadyHere) {
  if (state_ == State::Broken) return setError(error_, errorText_);
  if (peerGone_ && !alreadyHere) return fail(slimecclRemoteError, "ib: {} has closed the connection", peerName());
  return slimecclSuccess;
}

void IbEndpoint::progress() {
  if (state_ == State::Broken) return;
  if (armed_ && sawCompletion_) drainEvents();
  if (state_ == State::Setup) {
    setupStep();
    if (state_ != State::Established) return;
  }
  pollCompletions();
  checkPeer();
  if (!broken()) advance();
}

bool IbEndpoint::registerBuffer(IbRequest* r, bool remoteWrite) {
  const slimecclResult_t rc = r->onDevice
                                  ? cache_->acquireDevice(r->data, r->size, *deviceMemory_, deviceRoute_, &r->mr)
                                  : cache_->acquire(r->data, r->size, remoteWrite, &r->mr);
  if (rc == slimecclSuccess) return true;
  breakWith(rc, threadError());
  return false;
}

bool IbEndpoint::copyPayload(void* dst, const void* src, size_t bytes, bool device) {
  if (!device) {
    memcpy(dst, src, bytes);
    return true;
  }
  const slimecclResult_t rc = deviceMemory_->copy(dst, src, bytes);
  if (rc == slimecclSuccess) return true;
  breakWith(rc, fmt::format("ib: copying {} bytes between GPU memory and {}'s registered memory failed: {}", bytes,
                            dev_->port.device, threadError()));
  return false;
}

IbRequest* IbEndpoint::newRequest() {
  IbRequest* r;
  if (freeRequests_.empty()) {
    r = new IbRequest;
  } else {
    r = freeRequests_.back();
    freeRequests_.pop_back();
    *r = IbRequest{};
  }
  trackRequest(r);
  return r;
}

void IbEndpoint::trackRequest(IbRequest* r) {
  r->nextLive = live_;
  if (live_ != nullptr) live_->prevLive = r;
  live_ = r;
  ++liveCount_;
}

void IbEndpoint::untrackRequest(IbRequest* r) {
  if (r->prevLive != nullptr)
    r->prevLive->nextLive = r->nextLive;
  else
    live_ = r->nextLive;
  if (r->nextLive != nullptr) r->nextLive->prevLive = r->prevLive;
  --liveCount_;
}

void IbEndpoint::postNew() {
  if (state_ == State::Established)
    advance();
  else
    progress();
}

slimecclResult_t IbEndpoint::test(IbRequest* r, bool* done, size_t* size) {
  if (!r->done && state_ != State::Broken) progress();
  if (!r->done && state_ != State::Broken) {
    *done = false;
    return slimecclSuccess;
  }
  bool ok = r->done;
  *done = ok;
  if (ok) *size = r->moved;
  onFree(r);
  cache_->release(&r->mr);
  untrackRequest(r);
  if (freeRequests_.size() < kIbMaxInflight)
    freeRequests_.push_back(r);
  else
    delete r;
  return ok ? slimecclSuccess : setError(error_, errorText_);
}

WaitHint IbEndpoint::waitHint() {
  if (state_ == State::Broken) return WaitHint{};
  if (state_ == State::Setup) return WaitHint{sideFd_, POLLIN, false};
  if (!armed_ && ibv_req_notify_cq(cq_, 0) == 0) {
    armed_ = true;
    sawCompletion_ = false;
  }
  return WaitHint{channel_->fd, POLLIN, false};
}

}  // namespace slimeccl
