// The sending end of an ib connection. Messages up to the eager size are written with immediate
// data into the receiver's next eager slot (inline when small) and are done once posted; larger
// ones wait for the receiver's advert of the posted buffer, are written straight into it (cut
// over the connection's queue pairs) and end with a write with immediate data on queue pair 0.
#pragma once

#include <deque>
#include <map>

#include "net/ib/ib_endpoint.h"

namespace slimeccl {

class IbSender final : public IbEndpoint {
 public:
  // Opens the side channel to the listener of handle, sends the setup record and returns: the
  // queue pairs are connected when the listener's record comes back (in progress()).
  static slimecclResult_t connect(const NetContext& ctx, const IbHandle& handle, ConnKind kind, IbSender** out);
  // *out == nullptr: too many requests in flight, retry.
  slimecclResult_t isend(const void* data, size_t size, IbRequest** out);
  // Waits (bounded) until what was posted has reached the peer, since eager sends report done as
  // soon as they are posted.
  void flush();

 private:
  struct Watch {
    uint64_t seq;
    IbRequest* request;
    WrKind kind;
  };

  IbSender(IbDevice* dev, int rank, ConnKind kind, int sideFd) : IbEndpoint(dev, rank, true, kind, sideFd) {}
  // Sets up the queue pairs and sends the setup, carrying the connection's id and the sender's
  // `proof` of its claim (NetAuth::kProofBytes).
  slimecclResult_t create(uint64_t connection, const uint8_t* proof);
  void setupStep() override;
  void onArrival(const ibv_wc& wc) override;
  void onSendDone(int qp, uint64_t seq) override;
  void afterPoll() override;
  void advance() override;
  size_t pendingWork() const override;
  void onFree(IbRequest* r) override;

  IbRequest* messageAt(uint64_t index) const;
  void acceptAdvert(const CtrlMsg& m);
  bool hasCredit() const { return slotsUsed_ - peerReleased_ < slots_; }
  uint64_t nextSlotAddr() const { return peer_.slotsAddr + (slotsUsed_ % slots_) * slotBytes_; }
  bool sendEager(IbRequest* r);
  bool announce(IbRequest* r);
  bool startWrites(IbRequest* r, const CtrlMsg& advert);
  bool finish(IbRequest* r);
  void refuse(IbRequest* r, const CtrlMsg& advert);
  int sliceCount(size_t size) const;
  SendWork recordWork(IbRequest* r, uint32_t record) const;
  // A write with immediate into the peer's next slot, telling it `arrival` for message `index`.
  SendWork slotWork(WrKind kind, Arrival arrival, uint64_t index) const;
  char* ctrlBuffer(uint32_t i) const { return region_ + stagingBytes() + i * kCtrlStride; }
  size_t stagingBytes() const { return static_cast<size_t>(slots_) * slotBytes_; }
  void postCtrlBuffers(const std::vector<uint32_t>& buffers);

  static constexpr uint32_t kCtrlBuffers = 128;
  static constexpr size_t kCtrlStride = 64;

  uint32_t slots_ = kIbEagerSlots;
  uint32_t slotBytes_ = 0;
  size_t eagerLimit_ = 0;
  uint64_t nextIndex_ = 0;
  std::deque<IbRequest*> messages_;  // from the oldest not done, by index; nullptr once freed
  uint64_t frontIndex_ = 0;          // index of messages_.front()
  std::map<uint64_t, CtrlMsg> adverts_;
  uint64_t slotsUsed_ = 0;
  uint64_t peerReleased_ = 0;
  std::vector<uint64_t> stagingSeq_;  // per staging slot: the QP 0 request that reads it
  uint32_t stagingNext_ = 0;
  std::vector<std::deque<Watch>> watches_;  // per queue pair: signalled requests to act upon
  std::vector<uint32_t> repost_;
};

}  // namespace slimeccl
