#include "src/exec/eager_p2p.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "src/comm.h"
#include "src/device/device_staging.h"
#include "src/base/error.h"
#include "src/exec/executor.h"
#include "src/exec/idle.h"
#include "src/exec/plan.h"
#include "src/exec/session_header.h"

namespace slimeccl {
namespace {

constexpr size_t kMessageBytes = sizeof(OpDesc) + kInlineBytes;
// Each eager op holds a message buffer of the comm's while it runs; a larger group (an AlltoAll
// made of Send/Recv calls) goes through the executor.
constexpr size_t kMaxEagerOps = 16;

// One op's message on its lane: moved at once where the module can (NetModule::sendNow, recvNow:
// a Recv asks again at each step until its wait would block), else posted (again, while the
// module says "retry") and tested until done. A Send's message is written when it is made: a Recv
// of the same group may overwrite its source (in-place sendrecv) only once every message is done.
class EagerMessage {
 public:
  // Left unset: a call makes room for kMaxEagerOps messages and sets only those it runs.
  EagerMessage() = default;
  EagerMessage(OpRecord& op, Link* link, char* message)
      : op_(&op), link_(link), sending_(op.coll == Coll::Send), lane_(sending_ ? &link->dataOut : &link->dataIn),
        message_(message), bytes_(kMessageBytes), now_(NowStatus::NotYet), request_(nullptr), done_(false),
        received_(0) {
    if (!sending_) return;
    size_t at = writeShortHeader(Coll::Send, op.comm->rank, message);
    memcpy(message + at, op.sendbuff, op.bytes());
    bytes_ = at + op.bytes();
  }

  OpRecord& op() const { return *op_; }
  bool done() const { return done_; }

  slimecclResult_t step() {
    if (done_) return slimecclSuccess;
    slimecclResult_t rc = slimecclSuccess;
    if (now_ != NowStatus::UseRequest) {
      rc = sending_ ? link_->net->sendNow(lane_->conn, message_, bytes_, &now_)
                    : link_->net->recvNow(lane_->conn, message_, bytes_, &received_, &now_);
      if (rc != slimecclSuccess) return failed();
      done_ = now_ == NowStatus::Done;
      if (now_ != NowStatus::UseRequest) return slimecclSuccess;
    }
    if (request_ == nullptr) {
      rc = sending_ ? link_->net->isend(lane_->conn, message_, bytes_, &request_)
                    : link_->net->irecv(lane_->conn, message_, bytes_, &request_);
      if (rc != slimecclSuccess || request_ == nullptr) return rc == slimecclSuccess ? rc : failed();
    }
    if (link_->net->test(request_, &done_, &received_) != slimecclSuccess) return failed();
    return slimecclSuccess;
  }

  // From now on by request: what a blocking wait waits on, and what notices a peer gone.
  void useRequest() {
    if (!done_) now_ = NowStatus::UseRequest;
  }

  // What a blocking wait for this message waits on (nothing before it is posted).
  void addWaitHint(std::vector<WaitHint>& hints) const {
    if (done_ || request_ == nullptr) return;
    hints.push_back(sending_ ? link_->net->sendWaitHint(lane_->conn) : link_->net->recvWaitHint(lane_->conn));
  }

  // A Recv's message has come: the sender's descriptor must match this call, then the data lands.
  slimecclResult_t deliver() const {
    if (sending_) return slimecclSuccess;
    const OpRecord& op = *op_;
    size_t at = sizeof(ShortDesc);
    if (!isShortSend(message_, received_, op.peer, op.bytes())) {
      // Not the usual message: compare descriptors, for the sentence that names both calls.
      OpDesc mine, theirs;
      fillDesc(op, op.comm->rank, op.bytes(), &mine);
      at = readHeader(message_, received_, &theirs);
      SLIMECCL_CHECK(checkPeerDesc(op, mine, theirs, op.peer, false));
      if (received_ != at + op.bytes())
        return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a header of {} bytes", op.comm->rank,
                    describeOp(op), op.peer, received_);
    }
    memcpy(op.recvbuff, message_ + at, op.bytes());
    return slimecclSuccess;
  }

  slimecclResult_t timedOut() const {
    const OpRecord& op = *op_;
    return fail(slimecclTimeout,
                "rank {}: {} timed out after {} ms waiting on peer {} ({} 0 of {} bytes, nothing from the peer on this "
                "op yet)",
                op.comm->rank, describeOp(op), op.comm->params.timeoutMs, op.peer, sending_ ? "sent" : "received",
                op.bytes());
  }

 private:
  slimecclResult_t failed() const {
    const OpRecord& op = *op_;
    return fail(slimecclRemoteError, "rank {}: {}: {} {} bytes {} peer {} failed: {}", op.comm->rank, describeOp(op),
                sending_ ? "sending" : "receiving", op.bytes(), sending_ ? "to" : "from", op.peer, threadError());
  }

  OpRecord* op_;
  Link* link_;
  bool sending_;
  Lane* lane_;
  char* message_;
  size_t bytes_;
  NowStatus now_;  // UseRequest once it goes by request
  void* request_;
  bool done_;
  size_t received_;
};

// Posts and tests every message once; *allDone: whether each is done.
slimecclResult_t stepAll(std::span<EagerMessage> messages, bool* allDone) {
  *allDone = true;
  for (EagerMessage& message : messages) {
    SLIMECCL_CHECK(message.step());
    *allDone = *allDone && message.done();
  }
  return slimecclSuccess;
}

// Drives the messages until every one is done, waiting as the executor does: spin, yield, then
// block on what the module names.
slimecclResult_t runMessages(slimecclComm* comm, std::span<EagerMessage> messages) {
  IdleWaiter idle(comm->params.spinIterations, comm->params.yieldIterations);
  // Set once the ops first have to wait: ops that never do read no clock.
  std::optional<Deadline> deadline;
  for (;;) {
    bool allDone = false;
    SLIMECCL_CHECK(stepAll(messages, &allDone));
    if (allDone) return slimecclSuccess;
    if (!deadline) {
      // An op done at once (a Send, a Recv whose message is here) is entered in the flight
      // recorder only when it ends: on a ping-pong's path, one visit to the recorder's lock and
      // clock instead of two.
      for (EagerMessage& message : messages)
        if (!message.done()) comm->recorder.running(message.op(), nullptr);
      deadline = Deadline::afterMs(comm->params.timeoutMs);
    }
    if (comm->aborted.load()) return fail(slimecclInvalidUsage, "rank {}: the communicator was aborted", comm->rank);
    if (deadline->expired())
      return std::find_if(messages.begin(), messages.end(), [](const EagerMessage& m) { return !m.done(); })
          ->timedOut();
    // Only a wait that blocks needs these (spinning and yielding pass here many times).
    std::vector<WaitHint> hints;
    std::vector<Bell*> bells;
    if (idle.nextWaitBlocks()) {
      for (EagerMessage& message : messages) message.useRequest();
      SLIMECCL_CHECK(stepAll(messages, &allDone));
      if (allDone) return slimecclSuccess;
      bells.push_back(comm->bell.get());
      for (const EagerMessage& message : messages) message.addWaitHint(hints);
    }
    slimecclResult_t inner = slimecclSuccess;
    idle.wait(hints, bells, [&] {
      inner = stepAll(messages, &allDone);
      return inner == slimecclSuccess && !allDone;
    });
    SLIMECCL_CHECK(inner);
  }
}

// Whether the op may go as one eager message: a blocking Send or Recv of host buffers to or from
// another rank, in one chunk of at most kInlineBytes.
bool fitsOneMessage(const OpRecord& op) {
  const size_t chunkBytes = op.comm->params.chunkBytes;
  return op.isP2P() && op.peer != op.comm->rank && op.stream == nullptr && op.bytes() <= kInlineBytes &&
         (chunkBytes == 0 || op.bytes() <= chunkBytes) && !DeviceStaging::onDevice(op);
}

// Whether the ops are of one comm, each fits one message, and no two would share a lane.
bool qualifies(std::span<const OpRecord> ops) {
  if (ops.empty() || ops.size() > kMaxEagerOps) return false;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].comm != ops[0].comm || !fitsOneMessage(ops[i])) return false;
    for (size_t j = 0; j < i; ++j)
      if (ops[j].coll == ops[i].coll && ops[j].peer == ops[i].peer) return false;
  }
  return true;
}

// Whether the op's link is ready for it: connected, with nothing queued on any of its lanes.
// What is queued goes first, through the executor; that includes a hello the peer may still be
// waiting for on a control connection (an ib connection sends it only while this rank progresses
// the link), which this path, driving one lane, would never send.
Link* idleLinkFor(const OpRecord& op) {
  Link* link = op.comm->links[op.peer].get();
  if (link == nullptr || !link->connected()) return nullptr;
  bool idle = link->dataOut.idle() && link->ctrlOut.idle() && link->dataIn.idle() && link->ctrlIn.idle();
  return idle ? link : nullptr;
}

// The comm's message buffers, at least `count` of them, made on first use; false when memory runs out.
bool haveMessageBuffers(slimecclComm* comm, size_t count) {
  std::vector<std::unique_ptr<char[]>>& buffers = comm->eagerMessages;
  try {
    while (buffers.size() < count) buffers.push_back(std::unique_ptr<char[]>(new char[kMessageBytes]));
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

slimecclResult_t runLocked(std::span<OpRecord> ops, std::span<Link* const> links) {
  slimecclComm* comm = ops[0].comm;
  std::array<EagerMessage, kMaxEagerOps> made;
  std::span<EagerMessage> messages(made.data(), ops.size());
  // The comm's last route is its last op's.
  comm->lastRoute.started(ops.back(), slimecclRouteEager, "");
  for (size_t i = 0; i < ops.size(); ++i) messages[i] = EagerMessage(ops[i], links[i], comm->eagerMessages[i].get());
  SLIMECCL_CHECK(runMessages(comm, messages));
  for (const EagerMessage& message : messages) SLIMECCL_CHECK(message.deliver());
  return slimecclSuccess;
}

}  // namespace

bool runEagerP2P(std::span<OpRecord> ops, slimecclResult_t* rc) {
  if (!qualifies(ops)) return false;
  slimecclComm* comm = ops[0].comm;
  {
    std::lock_guard<std::mutex> lock(comm->execMutex);
    std::array<Link*, kMaxEagerOps> links;
    for (size_t i = 0; i < ops.size(); ++i)
      if ((links[i] = idleLinkFor(ops[i])) == nullptr) return false;
    // Without memory for the messages the executor's path runs the ops (and reports the failure).
    if (!haveMessageBuffers(comm, ops.size())) return false;
    // As a run does: a comm that failed since the calls' checks posts nothing more.
    *rc = commUsable(comm, collName(ops[0].coll));
    if (*rc == slimecclSuccess) {
      try {
        *rc = runLocked(ops, std::span<Link* const>(links.data(), ops.size()));
      } catch (const std::exception& e) {
        // An allocation failed (the recorder's ring, a wait's hints): the ops' sequence numbers
        // are spent and their peers would wait for them, so the comm fails as after any failed run.
        *rc = fail(slimecclSystemError, "rank {}: {}: cannot allocate what the op needs ({})", comm->rank,
                   describeOp(ops[0]), e.what());
      }
      if (*rc != slimecclSuccess) failAfterRun(comm, *rc, threadError());
    }
  }
  comm->recorder.finished(ops, *rc == slimecclSuccess, *rc == slimecclSuccess ? std::string() : threadError());
  return true;
}

}  // namespace slimeccl
