#include "src/exec/eager_p2p.h"

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

// The op's one message on its lane: posted (again, while the module says "retry") and tested
// until done, waiting as the executor does: spin, yield, then block on what the module names.
class EagerMessage {
 public:
  EagerMessage(OpRecord& op, Link* link, char* message, size_t bytes)
      : op_(op), comm_(op.comm), link_(link), sending_(op.coll == Coll::Send),
        lane_(sending_ ? &link->dataOut : &link->dataIn), message_(message), bytes_(bytes) {}

  // Success once the module reports the message done; *received: its size.
  slimecclResult_t run(size_t* received) {
    IdleWaiter idle(comm_->params.spinIterations, comm_->params.yieldIterations);
    bool waited = false;
    for (;;) {
      SLIMECCL_CHECK(step());
      if (done_) break;
      SLIMECCL_CHECK(checkInterrupts());
      // The flight recorder lists the op as running once it has to wait. One done at once (a
      // Send, a Recv whose message is here) is entered only when it ends: on a ping-pong's path,
      // one visit to the recorder's lock and clock instead of two.
      if (!waited) comm_->recorder.running(op_, nullptr);
      waited = true;
      slimecclResult_t inner = slimecclSuccess;
      // Only a wait that blocks needs these (spinning and yielding pass here many times).
      std::vector<WaitHint> hints;
      std::vector<Bell*> bells;
      if (idle.nextWaitBlocks()) {
        bells.push_back(comm_->bell.get());
        if (request_ != nullptr)
          hints.push_back(sending_ ? link_->net->sendWaitHint(lane_->conn) : link_->net->recvWaitHint(lane_->conn));
      }
      idle.wait(hints, bells, [&] {
        inner = step();
        return inner == slimecclSuccess && !done_;
      });
      SLIMECCL_CHECK(inner);
      if (done_) break;
    }
    *received = size_;
    return slimecclSuccess;
  }

 private:
  slimecclResult_t step() {
    slimecclResult_t rc = slimecclSuccess;
    if (request_ == nullptr) {
      rc = sending_ ? link_->net->isend(lane_->conn, message_, bytes_, &request_)
                    : link_->net->irecv(lane_->conn, message_, bytes_, &request_);
      if (rc != slimecclSuccess || request_ == nullptr) return rc == slimecclSuccess ? rc : failed();
    }
    if (link_->net->test(request_, &done_, &size_) != slimecclSuccess) return failed();
    return slimecclSuccess;
  }

  slimecclResult_t failed() {
    return fail(slimecclRemoteError, "rank {}: {}: {} {} bytes {} peer {} failed: {}", comm_->rank, describeOp(op_),
                sending_ ? "sending" : "receiving", op_.bytes(), sending_ ? "to" : "from", op_.peer, threadError());
  }

  slimecclResult_t checkInterrupts() {
    if (comm_->aborted.load()) return fail(slimecclInvalidUsage, "rank {}: the communicator was aborted", comm_->rank);
    // Set when the op first has to wait: an op that never does reads no clock.
    if (!deadline_) deadline_ = Deadline::afterMs(comm_->params.timeoutMs);
    if (!deadline_->expired()) return slimecclSuccess;
    return fail(slimecclTimeout,
                "rank {}: {} timed out after {} ms waiting on peer {} ({} 0 of {} bytes, nothing from the peer on this "
                "op yet)",
                comm_->rank, describeOp(op_), comm_->params.timeoutMs, op_.peer, sending_ ? "sent" : "received",
                op_.bytes());
  }

  OpRecord& op_;
  slimecclComm* comm_;
  Link* link_;
  bool sending_;
  Lane* lane_;
  char* message_;
  size_t bytes_;
  void* request_ = nullptr;
  bool done_ = false;
  size_t size_ = 0;
  std::optional<Deadline> deadline_;
};

// A Recv's message has come: the sender's descriptor must match this call, then the data lands.
slimecclResult_t deliver(const OpRecord& op, const char* message, size_t size) {
  size_t at = sizeof(ShortDesc);
  if (!isShortSend(message, size, op.peer, op.bytes())) {
    // Not the usual message: compare descriptors, for the sentence that names both calls.
    slimecclComm* comm = op.comm;
    OpDesc mine, theirs;
    fillDesc(op, comm->rank, op.bytes(), &mine);
    at = readHeader(message, size, &theirs);
    SLIMECCL_CHECK(checkPeerDesc(op, mine, theirs, op.peer, false));
    if (size != at + op.bytes())
      return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a header of {} bytes", comm->rank, describeOp(op),
                  op.peer, size);
  }
  memcpy(op.recvbuff, message + at, op.bytes());
  return slimecclSuccess;
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

slimecclResult_t runLocked(OpRecord& op, Link* link) {
  slimecclComm* comm = op.comm;
  char* message = comm->eagerMessage.get();
  size_t bytes = kMessageBytes;
  if (op.coll == Coll::Send) {
    size_t at = writeShortHeader(Coll::Send, comm->rank, message);
    memcpy(message + at, op.sendbuff, op.bytes());
    bytes = at + op.bytes();
  }
  size_t received = 0;
  SLIMECCL_CHECK(EagerMessage(op, link, message, bytes).run(&received));
  return op.coll == Coll::Recv ? deliver(op, message, received) : slimecclSuccess;
}

}  // namespace

bool runEagerP2P(OpRecord& op, slimecclResult_t* rc) {
  slimecclComm* comm = op.comm;
  size_t chunkBytes = comm->params.chunkBytes;
  if (op.bytes() > kInlineBytes || (chunkBytes != 0 && op.bytes() > chunkBytes) || DeviceStaging::onDevice(op))
    return false;
  {
    std::lock_guard<std::mutex> lock(comm->execMutex);
    Link* link = idleLinkFor(op);
    // Without memory for the message the executor's path runs the op (and reports the failure).
    if (!comm->eagerMessage) comm->eagerMessage.reset(new (std::nothrow) char[kMessageBytes]);
    if (link == nullptr || !comm->eagerMessage) return false;
    // As a run does: a comm that failed since the call's checks posts nothing more.
    *rc = commUsable(comm, collName(op.coll));
    if (*rc != slimecclSuccess) return true;
    comm->lastRoute.started(op, slimecclRouteEager, "");
    try {
      *rc = runLocked(op, link);
    } catch (const std::exception& e) {
      // An allocation failed (the recorder's ring, a wait's hints): the op's sequence number is
      // spent and its peer would wait for it, so the comm fails as after any failed run.
      *rc = fail(slimecclSystemError, "rank {}: {}: cannot allocate what the op needs ({})", comm->rank, describeOp(op),
                 e.what());
    }
    if (*rc != slimecclSuccess) failAfterRun(comm, *rc, threadError());
  }
  comm->recorder.finished(op, *rc == slimecclSuccess, threadError());
  return true;
}

}  // namespace slimeccl
