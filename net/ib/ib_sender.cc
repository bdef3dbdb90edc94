#include "net/ib/ib_sender.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "net/ib/ib_params.h"
#include "net/ib/side_channel.h"
#include "src/base/error.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

constexpr size_t kMaxWriteBytes = 1ULL << 30;  // one work request; sge lengths are 32-bit
constexpr size_t kMinSliceBytes = 64 * 1024;   // below this, more queue pairs cost more than they bring
constexpr int kFlushTimeoutMs = 5000;

size_t roundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

size_t writesFor(size_t bytes) { return bytes == 0 ? 1 : (bytes + kMaxWriteBytes - 1) / kMaxWriteBytes; }

}  // namespace

slimecclResult_t IbSender::connect(const NetContext& ctx, const IbHandle& handle, ConnKind kind, IbSender** out) {
  IbDevice* dev = nullptr;
  SLIMECCL_CHECK(ibDeviceForRank(ctx.rank, placementOf(ctx), &dev));
  int fd = -1;
  SLIMECCL_CHECK(sideConnect(handle.sideAddr, &fd));
  std::random_device rd;
  const NetClaim claim{ctx.rank, static_cast<uint32_t>(kind), (static_cast<uint64_t>(rd()) << 32) | rd(), 0};
  uint8_t proof[NetAuth::kProofBytes] = {};
  if (ctx.auth != nullptr) ctx.auth->prove(claim, handle.nonce, proof);
  auto* sender = new IbSender(dev, ctx.rank, kind, fd);
  slimecclResult_t rc = sender->create(claim.connection, proof);
  if (rc != slimecclSuccess) {
    delete sender;
    return rc;
  }
  *out = sender;
  return slimecclSuccess;
}

slimecclResult_t IbSender::create(uint64_t connection, const uint8_t* proof) {
  size_t eager = kind_ == ConnKind::Data ? ibParams().eagerBytes : kIbCtrlEagerBytes;
  slotBytes_ = static_cast<uint32_t>(roundUp(eager + sizeof(SlotHeader), 64));
  eagerLimit_ = slotBytes_ - sizeof(SlotHeader);
  int qpCount = kind_ == ConnKind::Data ? ibParams().qpsPerConn : 1;
  std::vector<QpShape> shapes;
  shapes.push_back(QpShape{kIbSendDepth, kCtrlBuffers, 256});
  for (int q = 1; q < qpCount; ++q) shapes.push_back(QpShape{kIbSendDepth, 1, 256});
  SLIMECCL_CHECK(createResources(shapes, stagingBytes() + kCtrlBuffers * kCtrlStride));
  stagingSeq_.assign(slots_, 0);
  watches_.resize(qpCount);
  std::vector<uint32_t> all(kCtrlBuffers);
  for (uint32_t i = 0; i < kCtrlBuffers; ++i) all[i] = i;
  postCtrlBuffers(all);
  if (broken()) return refuseIfUnusable();
  describeLocal();
  local_.slots = slots_;
  local_.slotBytes = slotBytes_;
  local_.connection = connection;
  memcpy(local_.proof, proof, sizeof(local_.proof));
  return sideWrite(sideFd_, &local_, sizeof(local_));
}

void IbSender::postCtrlBuffers(const std::vector<uint32_t>& buffers) {
  if (buffers.empty()) return;
  std::vector<ibv_recv_wr> wrs(buffers.size());
  std::vector<ibv_sge> sges(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    sges[i] = ibv_sge{reinterpret_cast<uintptr_t>(ctrlBuffer(buffers[i])), sizeof(CtrlMsg), regionMr_->lkey};
    wrs[i].wr_id = (1ULL << 63) | buffers[i];
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].next = i + 1 < buffers.size() ? &wrs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(qps_[0], wrs.data(), &bad);
  if (rc != 0)
    breakWith(slimecclSystemError,
              fmt::format("ib: posting receive buffers on {} failed: {}", dev_->port.device, strerror(rc)));
}

void IbSender::setupStep() {
  bool complete = false;
  slimecclResult_t rc = sideRead(sideFd_, &peer_, sizeof(peer_), &peerGot_, &complete);
  if (rc == slimecclSuccess && !complete) return;
  if (rc == slimecclSuccess) rc = connectQps();
  if (rc == slimecclSuccess && (peer_.slots != slots_ || peer_.slotBytes != slotBytes_ || peer_.records == 0))
    rc = fail(slimecclRemoteError, "ib: {} answered with {} eager slots of {} bytes where {} of {} were asked",
              peerName(), peer_.slots, peer_.slotBytes, slots_, slotBytes_);
  uint8_t ready = kIbReadyByte;
  if (rc == slimecclSuccess) rc = sideWrite(sideFd_, &ready, 1);
  if (rc != slimecclSuccess) {
    breakWith(rc, threadError());
    return;
  }
  state_ = State::Established;
}

slimecclResult_t IbSender::isend(const void* data, size_t size, IbRequest** out) {
  *out = nullptr;
  SLIMECCL_CHECK(refuseIfUnusable());
  if (liveRequests() >= kIbMaxInflight) return slimecclSuccess;
  IbRequest* r = newRequest();
  r->owner = this;
  r->index = nextIndex_++;
  r->data = static_cast<char*>(const_cast<void*>(data));
  r->size = size;
  r->sizeWord = size;
  r->onDevice = onDevice(data);
  if (messages_.empty()) frontIndex_ = r->index;
  messages_.push_back(r);
  postNew();
  *out = r;
  return slimecclSuccess;
}

IbRequest* IbSender::messageAt(uint64_t index) const {
  if (index < frontIndex_ || index - frontIndex_ >= messages_.size()) return nullptr;
  return messages_[index - frontIndex_];
}

void IbSender::acceptAdvert(const CtrlMsg& m) {
  if (m.index < nextIndex_) {
    // Posted already: the advert matters only to a message still waiting for it.
    IbRequest* r = messageAt(m.index);
    if (r == nullptr || r->done || r->phase != IbRequest::Phase::Queued || r->size <= eagerLimit_) return;
  }
  adverts_[m.index] = m;
}

void IbSender::onArrival(const ibv_wc& wc) {
  uint32_t buffer = static_cast<uint32_t>(wc.wr_id & 0xffffffff);
  CtrlMsg m;
  memcpy(&m, ctrlBuffer(buffer), sizeof(m));
  repost_.push_back(buffer);
  peerReleased_ = std::max(peerReleased_, m.slotsReleased);
  if (m.type == static_cast<uint32_t>(CtrlType::Advert)) acceptAdvert(m);
}

void IbSender::afterPoll() {
  postCtrlBuffers(repost_);
  repost_.clear();
}

void IbSender::onSendDone(int qp, uint64_t seq) {
  std::deque<Watch>& watches = watches_[qp];
  while (!watches.empty() && watches.front().seq <= seq) {
    Watch w = watches.front();
    watches.pop_front();
    if (w.kind == WrKind::Slice) {
      --w.request->slicesLeft;
    } else if (w.kind == WrKind::Final) {
      w.request->done = true;
      w.request->moved = w.request->size;
      cache_->release(&w.request->mr);
    }
  }
}

size_t IbSender::pendingWork() const {
  size_t n = 0;
  for (const IbRequest* r : messages_) n += r != nullptr && !r->done;
  return n;
}

void IbSender::onFree(IbRequest* r) {
  for (IbRequest*& m : messages_)
    if (m == r) m = nullptr;
}

int IbSender::sliceCount(size_t size) const {
  size_t qps = qps_.size();
  return static_cast<int>(std::clamp<size_t>(size / kMinSliceBytes, 1, qps));
}

SendWork IbSender::recordWork(IbRequest* r, uint32_t record) const {
  SendWork w;
  w.kind = WrKind::Record;
  w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(&r->sizeWord), sizeof(r->sizeWord), 0};
  w.wr.num_sge = 1;
  w.wr.opcode = IBV_WR_RDMA_WRITE;
  w.wr.send_flags = IBV_SEND_INLINE;
  w.wr.wr.rdma.remote_addr = peer_.recordsAddr + record * sizeof(uint64_t);
  w.wr.wr.rdma.rkey = peer_.rkey;
  return w;
}

SendWork IbSender::slotWork(WrKind kind, Arrival arrival, uint64_t index) const {
  SendWork w;
  w.kind = kind;
  w.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  w.wr.imm_data = packImm(arrival, index);
  w.wr.wr.rdma.remote_addr = nextSlotAddr();
  w.wr.wr.rdma.rkey = peer_.rkey;
  return w;
}

bool IbSender::sendEager(IbRequest* r) {
  if (!hasCredit() || !roomOn(0, 1)) return false;
  // The payload alone: the immediate data numbers the message and the receiver's completion
  // gives its size, so a small message carries no header bytes.
  SendWork w = slotWork(WrKind::Eager, Arrival::Eager, r->index);
  w.wr.num_sge = r->size > 0 ? 1 : 0;
  int staged = -1;
  if (r->size <= maxInline_ && !r->onDevice) {
    // Inline: the device copies at post time, so the buffer needs no registering.
    w.wr.send_flags = IBV_SEND_INLINE;
    w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(r->data), static_cast<uint32_t>(r->size), 0};
  } else {
    staged = static_cast<int>(stagingNext_);
    if (stagingSeq_[staged] > sq_[0].completed) return false;
    char* slot = region_ + static_cast<size_t>(staged) * slotBytes_;
    if (!copyPayload(slot, r->data, r->size, r->onDevice)) return false;
    w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(slot), static_cast<uint32_t>(r->size), regionMr_->lkey};
  }
  uint64_t seq = post(0, &w, 1);
  if (seq == 0) return false;
  if (staged >= 0) {
    stagingSeq_[staged] = seq;
    stagingNext_ = (stagingNext_ + 1) % slots_;
  }
  ++slotsUsed_;
  adverts_.erase(r->index);
  r->done = true;
  r->moved = r->size;
  return true;
}

bool IbSender::announce(IbRequest* r) {
  if (!hasCredit() || !roomOn(0, 1)) return false;
  SlotHeader header{r->index, r->size};
  SendWork w = slotWork(WrKind::Announce, Arrival::Announce, r->index);
  w.wr.send_flags = IBV_SEND_INLINE;
  w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(&header), sizeof(header), 0};
  w.wr.num_sge = 1;
  if (post(0, &w, 1) == 0) return false;
  ++slotsUsed_;
  r->announced = true;
  return true;
}

bool IbSender::startWrites(IbRequest* r, const CtrlMsg& advert) {
  if (r->size > advert.size) {
    refuse(r, advert);
    return false;
  }
  int n = sliceCount(r->size);
  auto sliceBegin = [&](int q) { return r->size * q / n; };
  for (int q = 0; q < n; ++q)
    if (!roomOn(q, static_cast<uint32_t>(writesFor(sliceBegin(q + 1) - sliceBegin(q)) + (q == 0 ? 1 : 0))))
      return false;
  if (r->mr.entry == nullptr && !registerBuffer(r, false)) return false;
  r->record = advert.record;
  r->slicesLeft = n - 1;
  r->phase = n == 1 ? IbRequest::Phase::Finishing : IbRequest::Phase::Writing;
  // Queue pairs 1..n-1 first, so that their slices travel while queue pair 0 writes its own.
  for (int q = n - 1; q >= 0; --q) {
    size_t begin = sliceBegin(q), end = sliceBegin(q + 1);
    std::vector<SendWork> work;
    if (q == 0) work.push_back(recordWork(r, advert.record));
    // Rendezvous messages are larger than the eager size, so no slice is empty.
    for (size_t off = begin; off < end; off += kMaxWriteBytes) {
      size_t len = std::min(kMaxWriteBytes, end - off);
      SendWork w;
      w.kind = WrKind::Slice;
      w.wr.opcode = IBV_WR_RDMA_WRITE;
      w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(r->data + off), static_cast<uint32_t>(len), r->mr.lkey};
      w.wr.num_sge = 1;
      w.wr.wr.rdma.remote_addr = advert.addr + off;
      w.wr.wr.rdma.rkey = advert.rkey;
      work.push_back(w);
    }
    SendWork& last = work.back();
    if (q > 0) {
      last.signaled = true;
    } else if (n == 1) {
      last.kind = WrKind::Final;
      last.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      last.wr.imm_data = packImm(Arrival::Final, r->index);
      last.signaled = true;
    }
    uint64_t seq = post(q, work.data(), static_cast<int>(work.size()));
    if (seq == 0) return false;
    if (last.signaled) watches_[q].push_back(Watch{seq, r, last.kind});
  }
  return true;
}

bool IbSender::finish(IbRequest* r) {
  if (!roomOn(0, 1)) return false;
  SendWork w;
  w.kind = WrKind::Final;
  w.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  w.wr.imm_data = packImm(Arrival::Final, r->index);
  w.wr.num_sge = 0;
  w.wr.wr.rdma.remote_addr = peer_.recordsAddr + r->record * sizeof(uint64_t);
  w.wr.wr.rdma.rkey = peer_.rkey;
  w.signaled = true;
  uint64_t seq = post(0, &w, 1);
  if (seq == 0) return false;
  watches_[0].push_back(Watch{seq, r, WrKind::Final});
  r->phase = IbRequest::Phase::Finishing;
  return true;
}

void IbSender::refuse(IbRequest* r, const CtrlMsg& advert) {
  // Tell the receiver why nothing comes, then fail: the connection is out of step from here.
  if (roomOn(0, 2)) {
    SendWork work[2] = {recordWork(r, advert.record), SendWork{}};
    work[1].kind = WrKind::Refused;
    work[1].wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    work[1].wr.imm_data = packImm(Arrival::Refused, r->index);
    work[1].wr.wr.rdma.remote_addr = peer_.recordsAddr + advert.record * sizeof(uint64_t);
    work[1].wr.wr.rdma.rkey = peer_.rkey;
    post(0, work, 2);
  }
  breakWith(slimecclInternalError, fmt::format("ib: a message of {} bytes is larger than the {}-byte receive {} posted",
                                               r->size, advert.size, peerName()));
}

void IbSender::advance() {
  for (size_t k = 0; k < messages_.size() && !broken(); ++k) {
    IbRequest* r = messages_[k];
    if (r == nullptr || r->done) continue;
    if (r->phase == IbRequest::Phase::Queued) {
      if (r->size <= eagerLimit_) {
        if (!sendEager(r)) break;
        continue;
      }
      auto it = adverts_.find(r->index);
      if (it == adverts_.end()) {
        // The receiver learns the size early, so that a receive too small for it fails there too.
        if (!r->announced) announce(r);
        break;
      }
      if (!startWrites(r, it->second)) break;
      adverts_.erase(it);
      continue;
    }
    if (r->phase == IbRequest::Phase::Writing && r->slicesLeft == 0 && !finish(r)) break;
  }
  while (!messages_.empty() && (messages_.front() == nullptr || messages_.front()->done)) {
    messages_.pop_front();
    ++frontIndex_;
  }
}

void IbSender::flush() {
  if (state_ != State::Established || sq_[0].posted == sq_[0].completed || !roomOn(0, 1)) return;
  SendWork w;
  w.kind = WrKind::Marker;
  w.wr.opcode = IBV_WR_RDMA_WRITE;
  w.wr.send_flags = IBV_SEND_INLINE;
  w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(&peer_.records), sizeof(uint64_t), 0};
  w.wr.num_sge = 1;
  w.wr.wr.rdma.remote_addr = peer_.recordsAddr + peer_.records * sizeof(uint64_t);
  w.wr.wr.rdma.rkey = peer_.rkey;
  w.signaled = true;
  uint64_t target = post(0, &w, 1);
  Deadline deadline = Deadline::afterMs(kFlushTimeoutMs);
  while (target != 0 && sq_[0].completed < target && !broken() && !peerGone() && !deadline.expired()) {
    progress();
    if (sq_[0].completed >= target) break;
    WaitHint hint = waitHint();
    progress();
    if (hint.fd >= 0 && sq_[0].completed < target) {
      pollfd pfd{hint.fd, hint.events, 0};
      poll(&pfd, 1, 10);
    }
  }
}

}  // namespace slimeccl
