// The receiving end of an ib connection. It holds the eager slots and the size records the sender
// writes into, advertises each posted buffer larger than the eager size (the sender writes only
// into advertised buffers), hands the eager slots back as credits, and matches every arrival to
// its receive by the message index in the immediate data.
#pragma once

#include <deque>
#include <map>
#include <vector>

#include "net/ib/ib_endpoint.h"

namespace slimeccl {

class IbReceiver final : public IbEndpoint {
 public:
  // Builds the receiving end for a sender whose setup record arrived on sideFd: creates and
  // connects the queue pairs and answers with this end's record. The sender may write once its
  // ready byte arrives (in progress()).
  static slimecclResult_t accept(int rank, IbDevice* dev, int sideFd, const IbSetup& senderSetup, IbReceiver** out);
  // *out == nullptr: too many requests in flight, retry.
  slimecclResult_t irecv(void* data, size_t size, IbRequest** out);

 private:
  // An arrival for a message whose receive is not posted yet: it keeps its slot until then.
  struct Early {
    Arrival kind;
    uint32_t slot;
    uint64_t size;
  };

  IbReceiver(IbDevice* dev, int rank, ConnKind kind, int sideFd) : IbEndpoint(dev, rank, false, kind, sideFd) {}
  slimecclResult_t create(const IbSetup& senderSetup);
  void setupStep() override;
  void onArrival(const ibv_wc& wc) override;
  void afterPoll() override;
  void advance() override;
  size_t pendingWork() const override;
  void onFree(IbRequest* r) override;

  IbRequest* requestAt(uint64_t index) const;
  bool repeats(int64_t index, Arrival kind) const;
  void deliverSlot(IbRequest* r, const Early& arrival);
  void complete(IbRequest* r, size_t bytes);
  void consumeSlot(uint32_t slot);
  bool sendControl(const CtrlMsg& m);
  void postReceives();
  char* slot(uint32_t i) const { return region_ + static_cast<size_t>(i) * slotBytes_; }
  uint64_t* records() const { return reinterpret_cast<uint64_t*>(region_ + static_cast<size_t>(slots_) * slotBytes_); }

  static constexpr uint32_t kRecords = kIbMaxInflight;
  static constexpr uint32_t kRecvDepth = 128;  // > eager slots + records: arrivals never find none

  uint32_t slots_ = 0;
  uint32_t slotBytes_ = 0;
  size_t eagerLimit_ = 0;
  uint64_t base_ = 0;              // index of posted_.front()
  uint64_t nextIndex_ = 0;         // index of the next irecv
  std::deque<IbRequest*> posted_;  // by index; nullptr once freed
  std::map<uint64_t, Early> early_;
  uint64_t slotArrivals_ = 0;
  std::vector<bool> consumed_;
  uint64_t slotsReleased_ = 0;  // freed in ring order: the sender's credits
  uint64_t slotsReported_ = 0;
  std::deque<IbRequest*> toAdvertise_;
  std::vector<uint32_t> freeRecords_;
  uint32_t recvsPosted_ = 0;
  uint64_t repeatedArrivals_ = 0;
};

}  // namespace slimeccl
