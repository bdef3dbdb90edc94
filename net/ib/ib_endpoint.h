// One direction of an ib connection. The base class holds what both ends have (completion queue
// with its completion channel, queue pairs, a registered region, the side channel), polls
// completions, notices a peer that went away, turns failures into one sentence, and says what to
// block on. IbSender and IbReceiver add the data path.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "net/ib/ib_device.h"
#include "net/ib/ib_qp.h"
#include "net/ib/ib_wire.h"
#include "net/ib/mr_cache.h"
#include "net/net.h"

namespace slimeccl {

class IbEndpoint;

// Requests a connection holds at once (isend/irecv answer "retry" beyond), which is also the
// number of receive buffers a receiver may have advertised.
constexpr size_t kIbMaxInflight = 64;
// Eager slots at the receiver (the sender's credits) and the payload of a control connection's.
constexpr uint32_t kIbEagerSlots = 16;
constexpr size_t kIbCtrlEagerBytes = 240;
constexpr uint32_t kIbSendDepth = 256;

// A posted isend or irecv; test() hands it back to its endpoint's free list once it reports done
// or an error.
struct IbRequest {
  IbEndpoint* owner = nullptr;
  uint64_t index = 0;  // position on the connection; the n-th isend meets the n-th irecv
  char* data = nullptr;
  size_t size = 0;   // sender: the message; receiver: the buffer
  size_t moved = 0;  // bytes sent or received
  bool done = false;
  bool onDevice = false;  // the buffer is device memory (GPUDirect RDMA): the CPU never touches it
  MrRef mr;
  // Sender: the announce was written; receiver: it arrived.
  bool announced = false;
  // Sender: how far the message got.
  enum class Phase { Queued, Writing, Finishing } phase = Phase::Queued;
  int slicesLeft = 0;
  uint64_t sizeWord = 0;  // source of the size written into the receiver's record
  // Receiver: data was advertised to the sender. Both ends: the advert's size record.
  bool advertised = false;
  uint32_t record = 0;
  // The endpoint's list of live requests (a list, not a set: one is added and removed per message).
  IbRequest* prevLive = nullptr;
  IbRequest* nextLive = nullptr;
};

// Kinds of send work requests, kept in wr_id so that a failed completion can be described.
enum class WrKind : uint8_t { Eager, Announce, Record, Slice, Final, Refused, Control, Marker };

// A send work request with its scatter list, before posting.
struct SendWork {
  ibv_send_wr wr{};
  ibv_sge sge[2]{};
  WrKind kind = WrKind::Control;
  bool signaled = false;  // asked for; the endpoint also signals every few requests
};

class IbEndpoint {
 public:
  virtual ~IbEndpoint();
  IbEndpoint(const IbEndpoint&) = delete;
  IbEndpoint& operator=(const IbEndpoint&) = delete;

  // Moves the connection forward: setup, completions, posting. Not an error when broken (requests
  // report that).
  void progress();
  // Posts what a new request allows, without polling: the test() that follows a post polls, and
  // a poll per post as well cost a pass over the completion queue per message.
  void postNew();
  // Reports a request (and frees it once done or failed).
  slimecclResult_t test(IbRequest* r, bool* done, size_t* size);
  WaitHint waitHint();
  // GPUDirect RDMA: buffers that are device memory are registered by `route` and copied through
  // `memory`, never read or written by the CPU.
  void takeDeviceMemory(const DeviceMemoryAccess* memory, DeviceMemoryRoute route) {
    deviceMemory_ = memory;
    deviceRoute_ = route;
  }

 protected:
  enum class State { Setup, Established, Broken };
  struct SendQueue {
    uint64_t posted = 0;
    uint64_t completed = 0;
    uint32_t sinceSignal = 0;
    uint32_t depth = 0;
  };

  IbEndpoint(IbDevice* dev, int rank, bool sender, ConnKind kind, int sideFd);
  // Creates the CQ, one queue pair per shape and the registered region of regionBytes.
  slimecclResult_t createResources(const std::vector<QpShape>& shapes, size_t regionBytes);
  // Fills the generic part of local_ (rank, kind, QPs, address).
  void describeLocal();
  // Checks the peer's setup record and moves the queue pairs to RTS facing it.
  slimecclResult_t connectQps();

  // Side specific.
  virtual void setupStep() = 0;                  // state Setup: read what the side channel brings
  virtual void onArrival(const ibv_wc& wc) = 0;  // a receive completion
  virtual void onSendDone(int qp, uint64_t seq) {}
  virtual void afterPoll() {}
  virtual void advance() = 0;              // post what can be posted
  virtual size_t pendingWork() const = 0;  // messages not complete yet
  virtual void onFree(IbRequest* r) {}

  bool roomOn(int qp, uint32_t count) const { return sq_[qp].posted - sq_[qp].completed + count <= sq_[qp].depth; }
  // Posts a chain on one QP; returns the sequence number of its last request, 0 when broken.
  uint64_t post(int qp, SendWork* work, int count);
  void pollCompletions();
  // Marks the connection broken with code and a sentence; every live request will report it.
  void breakWith(slimecclResult_t code, std::string sentence);
  bool broken() const { return state_ == State::Broken; }
  bool peerGone() const { return peerGone_; }
  // A request for a new isend or irecv, tracked as live: from the free list when it has one (a
  // small message would otherwise pay an allocation and a free).
  IbRequest* newRequest();
  size_t liveRequests() const { return liveCount_; }
  std::string peerName() const;
  // Whether `data` is device memory this endpoint reaches directly.
  bool onDevice(const void* data) const {
    return deviceMemory_ != nullptr && data != nullptr && deviceMemory_->isDeviceMemory(data);
  }
  // Registers the request's buffer (its keys land in r->mr); false, the connection broken, when the
  // device refuses it.
  bool registerBuffer(IbRequest* r, bool remoteWrite);
  // Copies a small payload between a request's buffer (device memory where `device`) and the
  // endpoint's registered host memory; false, the connection broken, when the copy fails.
  bool copyPayload(void* dst, const void* src, size_t bytes, bool device);
  // Fails a new isend/irecv when the connection cannot take it; a receive whose message arrived
  // before the peer left (alreadyHere) is still served.
  slimecclResult_t refuseIfUnusable(bool alreadyHere = false);

  IbDevice* dev_;
  MrCache* cache_;
  const DeviceMemoryAccess* deviceMemory_ = nullptr;
  DeviceMemoryRoute deviceRoute_ = DeviceMemoryRoute::None;
  int rank_;
  bool sender_;
  ConnKind kind_;
  int sideFd_;
  State state_ = State::Setup;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
  std::vector<SendQueue> sq_;
  uint32_t maxInline_ = 0;
  char* region_ = nullptr;
  size_t regionBytes_ = 0;
  ibv_mr* regionMr_ = nullptr;
  IbSetup local_{};
  IbSetup peer_{};
  size_t peerGot_ = 0;

 private:
  void drainEvents();
  void checkPeer();
  void trackRequest(IbRequest* r);
  void untrackRequest(IbRequest* r);
  std::string describeFailure(const ibv_wc& wc) const;

  bool armed_ = false;
  bool sawCompletion_ = false;  // since the CQ was last armed
  unsigned unackedEvents_ = 0;
  bool peerGone_ = false;
  int64_t nextPeekNs_ = 0;
  slimecclResult_t error_ = slimecclSuccess;
  std::string errorText_;
  IbRequest* live_ = nullptr;
  size_t liveCount_ = 0;
  std::vector<IbRequest*> freeRequests_;  // at most kIbMaxInflight
};

}  // namespace slimeccl
