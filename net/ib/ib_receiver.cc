#include "net/ib/ib_receiver.h"

#include <algorithm>
#include <cstring>

#include "net/ib/side_channel.h"
#include "src/base/error.h"
#include "src/base/log.h"

namespace slimeccl {
namespace {

constexpr uint32_t kMaxSlots = 256;
constexpr uint32_t kMaxSlotBytes = (1u << 20) + 64;

}  // namespace

slimecclResult_t IbReceiver::accept(int rank, IbDevice* dev, int sideFd, const IbSetup& senderSetup, IbReceiver** out) {
  ConnKind kind = senderSetup.kind == static_cast<uint32_t>(ConnKind::Ctrl) ? ConnKind::Ctrl : ConnKind::Data;
  auto* receiver = new IbReceiver(dev, rank, kind, sideFd);
  slimecclResult_t rc = receiver->create(senderSetup);
  if (rc != slimecclSuccess) {
    delete receiver;
    return rc;
  }
  *out = receiver;
  return slimecclSuccess;
}

slimecclResult_t IbReceiver::create(const IbSetup& senderSetup) {
  peer_ = senderSetup;
  if (peer_.slots == 0 || peer_.slots > kMaxSlots || peer_.slotBytes < 64 || peer_.slotBytes > kMaxSlotBytes ||
      peer_.qpCount == 0 || peer_.qpCount > static_cast<uint32_t>(kIbMaxQpsPerConn))
    return fail(slimecclRemoteError,
                "ib: rank {} asked for an impossible connection ({} queue pairs, {} slots of {} bytes)", peer_.rank,
                peer_.qpCount, peer_.slots, peer_.slotBytes);
  slots_ = peer_.slots;
  slotBytes_ = peer_.slotBytes;
  eagerLimit_ = slotBytes_ - sizeof(SlotHeader);
  std::vector<QpShape> shapes;
  shapes.push_back(QpShape{kIbSendDepth, kRecvDepth, 256});
  for (uint32_t q = 1; q < peer_.qpCount; ++q) shapes.push_back(QpShape{1, 1, 256});
  SLIMECCL_CHECK(createResources(shapes, static_cast<size_t>(slots_) * slotBytes_ + (kRecords + 1) * sizeof(uint64_t)));
  consumed_.assign(slots_, false);
  for (uint32_t i = kRecords; i > 0; --i) freeRecords_.push_back(i - 1);
  postReceives();
  if (broken()) return refuseIfUnusable();
  describeLocal();
  SLIMECCL_CHECK(connectQps());
  local_.slotsAddr = reinterpret_cast<uintptr_t>(region_);
  local_.recordsAddr = reinterpret_cast<uintptr_t>(records());
  local_.rkey = regionMr_->rkey;
  local_.slots = slots_;
  local_.slotBytes = slotBytes_;
  local_.records = kRecords;
  return sideWrite(sideFd_, &local_, sizeof(local_));
}

void IbReceiver::setupStep() {
  // The sender moves its queue pairs to RTS before it sends the ready byte: only then may control
  // messages go to it.
  uint8_t ready = 0;
  size_t got = 0;
  bool complete = false;
  slimecclResult_t rc = sideRead(sideFd_, &ready, 1, &got, &complete);
  if (rc == slimecclSuccess && !complete) return;
  if (rc == slimecclSuccess && ready != kIbReadyByte)
    rc = fail(slimecclRemoteError, "ib: {} sent a bad byte on the side channel during setup", peerName());
  if (rc != slimecclSuccess) {
    breakWith(rc, threadError());
    return;
  }
  state_ = State::Established;
}

void IbReceiver::postReceives() {
  // Arrivals are RDMA writes with immediate data: their receive requests need no buffer.
  uint32_t missing = kRecvDepth - recvsPosted_;
  if (missing < kRecvDepth / 8) return;
  std::vector<ibv_recv_wr> wrs(missing);
  for (uint32_t i = 0; i < missing; ++i) {
    wrs[i].wr_id = 1ULL << 63;
    wrs[i].num_sge = 0;
    wrs[i].next = i + 1 < missing ? &wrs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(qps_[0], wrs.data(), &bad);
  if (rc != 0) {
    breakWith(slimecclSystemError,
              fmt::format("ib: posting receive requests on {} failed: {}", dev_->port.device, strerror(rc)));
    return;
  }
  recvsPosted_ = kRecvDepth;
}

slimecclResult_t IbReceiver::irecv(void* data, size_t size, IbRequest** out) {
  *out = nullptr;
  auto arrived = early_.find(nextIndex_);
  SLIMECCL_CHECK(refuseIfUnusable(arrived != early_.end() && arrived->second.kind == Arrival::Eager));
  if (liveRequests() >= kIbMaxInflight) return slimecclSuccess;
  IbRequest* r = newRequest();
  r->owner = this;
  r->index = nextIndex_++;
  r->data = static_cast<char*>(data);
  r->size = size;
  r->onDevice = onDevice(data);
  if (posted_.empty()) base_ = r->index;
  posted_.push_back(r);
  auto early = early_.find(r->index);
  if (early != early_.end()) {
    Early arrival = early->second;
    early_.erase(early);
    deliverSlot(r, arrival);
  }
  if (!r->done && r->size > eagerLimit_) toAdvertise_.push_back(r);
  postNew();
  *out = r;
  return slimecclSuccess;
}

IbRequest* IbReceiver::requestAt(uint64_t index) const {
  if (index < base_ || index - base_ >= posted_.size()) return nullptr;
  return posted_[index - base_];
}

void IbReceiver::complete(IbRequest* r, size_t bytes) {
  r->done = true;
  r->moved = bytes;
  cache_->release(&r->mr);
  if (r->advertised) freeRecords_.push_back(r->record);
}

void IbReceiver::consumeSlot(uint32_t i) {
  consumed_[i] = true;
  // Credits go back in ring order: the sender fills slots in that order.
  while (consumed_[slotsReleased_ % slots_]) {
    consumed_[slotsReleased_ % slots_] = false;
    ++slotsReleased_;
  }
}

void IbReceiver::deliverSlot(IbRequest* r, const Early& arrival) {
  if (arrival.size > r->size) {
    breakWith(slimecclInternalError, fmt::format("ib: a message of {} bytes from {} arrived for a receive of {} bytes",
                                                 arrival.size, peerName(), r->size));
    return;
  }
  if (arrival.kind == Arrival::Eager) {
    if (!copyPayload(r->data, slot(arrival.slot), arrival.size, r->onDevice)) return;
    complete(r, arrival.size);
  } else {
    r->announced = true;
  }
  consumeSlot(arrival.slot);
}

// soft-RoCE has been seen to complete one RDMA write with immediate data twice under heavy
// retransmission: an arrival for a message that is complete already, or a second announce, is
// dropped (and takes no slot: the sender wrote just one).
bool IbReceiver::repeats(int64_t index, Arrival kind) const {
  if (index < static_cast<int64_t>(posted_.empty() ? nextIndex_ : base_)) return true;
  IbRequest* r = requestAt(static_cast<uint64_t>(index));
  if (r != nullptr) return r->done || (kind == Arrival::Announce && r->announced);
  return early_.count(static_cast<uint64_t>(index)) != 0;
}

void IbReceiver::onArrival(const ibv_wc& wc) {
  --recvsPosted_;
  if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0) {
    breakWith(slimecclRemoteError,
              fmt::format("ib: {} sent something other than an RDMA write with immediate data", peerName()));
    return;
  }
  Arrival kind = immArrival(wc.imm_data);
  int64_t signedIndex = immIndex(wc.imm_data, posted_.empty() ? nextIndex_ : base_);
  if (repeats(signedIndex, kind)) {
    ++repeatedArrivals_;
    SLIMECCL_INFO(kLogNet, rank_, "ib: dropped a repeated completion for message {} from {} ({} so far)", signedIndex,
                  peerName(), repeatedArrivals_);
    return;
  }
  uint64_t index = static_cast<uint64_t>(signedIndex);
  if (kind == Arrival::Eager || kind == Arrival::Announce) {
    uint32_t i = static_cast<uint32_t>(slotArrivals_++ % slots_);
    // An eager message is the payload alone: its size is the completion's (byte_len, which verbs
    // define for a write with immediate data). An announce is a header: the message's number and size.
    SlotHeader header{index, wc.byte_len};
    if (kind == Arrival::Announce) memcpy(&header, slot(i), sizeof(header));
    if (kind == Arrival::Eager && header.size > eagerLimit_) {
      breakWith(slimecclRemoteError, fmt::format("ib: {} wrote {} bytes into eager slot {}, which holds {}", peerName(),
                                                 header.size, i, eagerLimit_));
      return;
    }
    if (header.index != index) {
      breakWith(slimecclRemoteError,
                fmt::format("ib: {} wrote a corrupt eager slot: slot {} announces message {} where message {} was "
                            "announced",
                            peerName(), i, header.index, index));
      return;
    }
    Early arrival{kind, i, header.size};
    IbRequest* r = requestAt(index);
    if (r == nullptr) {
      early_[index] = arrival;
      return;
    }
    deliverSlot(r, arrival);
    return;
  }
  IbRequest* r = requestAt(index);
  if (r == nullptr || !r->advertised) {
    breakWith(slimecclRemoteError,
              fmt::format("ib: {} completed message {}, which had no advertised buffer", peerName(), index));
    return;
  }
  uint64_t size = records()[r->record];
  if (kind == Arrival::Refused || size > r->size) {
    breakWith(slimecclInternalError, fmt::format("ib: a message of {} bytes from {} arrived for a receive of {} bytes",
                                                 size, peerName(), r->size));
    return;
  }
  complete(r, size);
}

void IbReceiver::afterPoll() { postReceives(); }

bool IbReceiver::sendControl(const CtrlMsg& m) {
  if (!roomOn(0, 1)) return false;
  SendWork w;
  w.kind = WrKind::Control;
  w.wr.opcode = IBV_WR_SEND;
  w.wr.send_flags = IBV_SEND_INLINE;
  w.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(&m), sizeof(m), 0};
  w.wr.num_sge = 1;
  if (post(0, &w, 1) == 0) return false;
  slotsReported_ = m.slotsReleased;
  return true;
}

void IbReceiver::advance() {
  while (!toAdvertise_.empty() && !broken()) {
    IbRequest* r = toAdvertise_.front();
    if (r->done) {
      toAdvertise_.pop_front();
      continue;
    }
    if (!roomOn(0, 1)) break;
    if (r->mr.entry == nullptr && !registerBuffer(r, true)) return;
    CtrlMsg m{};
    m.type = static_cast<uint32_t>(CtrlType::Advert);
    m.record = freeRecords_.back();
    m.index = r->index;
    m.addr = reinterpret_cast<uintptr_t>(r->data);
    m.size = r->size;
    m.slotsReleased = slotsReleased_;
    m.rkey = r->mr.rkey;
    records()[m.record] = 0;
    if (!sendControl(m)) return;
    freeRecords_.pop_back();
    r->record = m.record;
    r->advertised = true;
    toAdvertise_.pop_front();
  }
  if (slotsReleased_ - slotsReported_ >= slots_ / 2 && !broken()) {
    CtrlMsg m{};
    m.type = static_cast<uint32_t>(CtrlType::Credit);
    m.slotsReleased = slotsReleased_;
    sendControl(m);
  }
}

size_t IbReceiver::pendingWork() const {
  size_t n = 0;
  for (const IbRequest* r : posted_) n += r != nullptr && !r->done;
  return n;
}

void IbReceiver::onFree(IbRequest* r) {
  for (IbRequest*& p : posted_)
    if (p == r) p = nullptr;
  while (!posted_.empty() && posted_.front() == nullptr) {
    posted_.pop_front();
    ++base_;
  }
  for (auto it = toAdvertise_.begin(); it != toAdvertise_.end();)
    it = *it == r ? toAdvertise_.erase(it) : std::next(it);
}

}  // namespace slimeccl
