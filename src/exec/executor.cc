#include "src/exec/executor.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "src/bootstrap/auth.h"
#include "src/comm.h"
#include "src/base/error.h"
#include "src/exec/idle.h"
#include "src/exec/mailbox_run.h"
#include "src/exec/session_header.h"
#include "src/base/util/per_thread.h"
#include "src/link/system_net_placement.h"
#include "src/base/util/secure.h"

namespace slimeccl {
namespace {

// The proof a connection from `rank` of `kind` carries to the rank whose connection nonce is `nonce`.
Proof connectionProof(const CommSecret& secret, int rank, uint32_t kind, const Nonce& nonce) {
  return proveSecret(secret, ProofPurpose::Connection, (static_cast<int64_t>(rank) << 8) | kind, nonce);
}

// ---- making links ----

slimecclResult_t connectOut(slimecclComm* comm, Link* link, Lane* lane, ConnKind kind) {
  if (lane->conn != nullptr) return slimecclSuccess;
  const NetContext ctx = commNetContext(comm, link->peerClass);
  const void* handle = comm->peers[link->peer].netHandles[link->peerClass];
  if (link->net->connect(ctx, handle, kind, &lane->conn) != slimecclSuccess) {
    prefixThreadError(
        fmt::format("rank {}: connecting to peer {} over '{}': ", comm->rank, link->peer, link->net->name()));
    return slimecclRemoteError;
  }
  if (lane->conn == nullptr) return slimecclSuccess;
  // The hello goes first on the new connection; it belongs to the link, not to any op.
  auto* hello = new ConnectHello{kConnectHelloMagic, comm->rank, static_cast<uint32_t>(kind), 0, {}};
  const Proof proof =
      connectionProof(comm->secret, comm->rank, static_cast<uint32_t>(kind), comm->peers[link->peer].connectionNonce);
  memcpy(hello->proof, proof.bytes, sizeof(hello->proof));
  auto* op = new NetOp{NetOpKind::Hello, reinterpret_cast<char*>(hello), sizeof(ConnectHello)};
  lane->waiting.push_front(op);
  return slimecclSuccess;
}

// Accepts connections and reads their hellos; a connection lands on the link of the rank it names.
slimecclResult_t acceptIn(slimecclComm* comm) {
  for (int peerClass = 0; peerClass < kPeerClasses; ++peerClass) {
    if (comm->listeners[peerClass] == nullptr) continue;
    for (;;) {
      void* conn = nullptr;
      SLIMECCL_CHECK(comm->nets[peerClass]->accept(comm->listeners[peerClass], &conn));
      if (conn == nullptr) break;
      comm->pendingAccepts.push_back({peerClass, conn, nullptr, {}});
    }
  }
  for (auto it = comm->pendingAccepts.begin(); it != comm->pendingAccepts.end();) {
    auto& p = *it;
    NetModule* net = comm->nets[p.peerClass];
    if (p.request == nullptr) SLIMECCL_CHECK(net->irecv(p.conn, &p.hello, sizeof(p.hello), &p.request));
    bool done = false;
    size_t size = 0;
    if (p.request != nullptr) SLIMECCL_CHECK(net->test(p.request, &done, &size));
    if (!done) {
      ++it;
      continue;
    }
    const ConnectHello& h = p.hello;
    Proof proof;
    memcpy(proof.bytes, h.proof, sizeof(proof.bytes));
    // A proof seen on the wire cannot open a second connection: each rank and kind connects once.
    bool valid =
        size == sizeof(ConnectHello) && h.magic == kConnectHelloMagic && h.rank >= 0 && h.rank < comm->nranks &&
        h.kind <= 1 && peerClassOf(comm, h.rank) == p.peerClass &&
        equalConstantTime(proof.bytes,
                          connectionProof(comm->secret, h.rank, h.kind, comm->peers[comm->rank].connectionNonce).bytes,
                          kProofBytes);
    Link* link = valid ? commLink(comm, h.rank) : nullptr;
    Lane* lane =
        link == nullptr ? nullptr : (h.kind == static_cast<uint32_t>(ConnKind::Ctrl) ? &link->ctrlIn : &link->dataIn);
    if (lane == nullptr || lane->conn != nullptr) {
      SLIMECCL_WARN(kLogNet, comm->rank, "dropped an incoming {} connection that did not prove itself", net->name());
      net->closeRecv(p.conn);
    } else {
      lane->conn = p.conn;
      SLIMECCL_TRACE(kLogNet, comm->rank, "connected from peer {} ({}, {})", h.rank, net->name(),
                     h.kind ? "ctrl" : "data");
    }
    it = comm->pendingAccepts.erase(it);
  }
  return slimecclSuccess;
}

// ---- running net operations ----

slimecclResult_t opError(slimecclComm* comm, NetOp* op, bool sending) {
  std::string cause = threadError();
  std::string what = op->plan != nullptr ? describeOp(op->plan->op) : std::string("connection setup");
  int peer = op->session != nullptr ? op->session->peer : -1;
  return fail(slimecclRemoteError, "rank {}: {}: {} {} bytes {} peer {} failed: {}", comm->rank, what,
              sending ? "sending" : "receiving", op->bytes, sending ? "to" : "from", peer, cause);
}

// Copies a message's inline part between the op's buffer and its header, with the GPU where the
// buffer is device memory the net reaches itself.
slimecclResult_t copyInline(const OpPlan& plan, char* dst, const char* src, size_t bytes) {
  if (!plan.op.netReachesDevice) {
    memcpy(dst, src, bytes);
    return slimecclSuccess;
  }
  const slimecclResult_t rc = gpuCopy(dst, src, bytes, plan.op.comm->gdrGpu, CopyOrder::Unordered);
  if (rc != slimecclSuccess) prefixThreadError("copying the inline part of a message: ");
  return rc;
}

slimecclResult_t prepare(NetOp* op) {
  if (op->kind != NetOpKind::HeaderSend) return slimecclSuccess;
  Session* s = op->session;
  size_t at = writeHeader(s->local, s->shortHeader, s->staging.get());
  if (s->inlineChunk == nullptr) return slimecclSuccess;
  return copyInline(*op->plan, s->staging.get() + at, s->inlineChunk->data, s->inlineChunk->bytes);
}

slimecclResult_t complete(NetOp* op, size_t size) {
  Session* s = op->session;
  OpPlan* plan = op->plan;
  NetOp* inlined = s != nullptr ? s->inlineChunk : nullptr;
  switch (op->kind) {
    case NetOpKind::Hello:
      delete reinterpret_cast<ConnectHello*>(op->data);
      delete op;
      return slimecclSuccess;
    case NetOpKind::CtsRecv:
      s->remoteSeen.store(true, std::memory_order_relaxed);
      SLIMECCL_CHECK(checkPeerDesc(*plan, *s));
      break;
    case NetOpKind::HeaderRecv: {
      size_t at = readHeader(s->staging.get(), size, &s->remote);
      s->remoteSeen.store(true, std::memory_order_relaxed);
      SLIMECCL_CHECK(checkPeerDesc(*plan, *s));
      if (size != at + (inlined ? inlined->bytes : 0))
        return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a header of {} bytes", s->local.rank,
                    describeOp(plan->op), s->peer, size);
      if (inlined != nullptr) {
        SLIMECCL_CHECK(copyInline(*plan, inlined->data, s->staging.get() + at, inlined->bytes));
        finishReceivedChunk(plan, inlined);
        addRelaxed(s->bytesDone, inlined->bytes);
      }
      break;
    }
    case NetOpKind::HeaderSend:
      if (inlined != nullptr) {
        ++plan->stepDone[inlined->step];
        addRelaxed(s->bytesDone, inlined->bytes);
      }
      break;
    case NetOpKind::DataRecv:
      if (size != op->bytes)
        return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a chunk of {} bytes where {} were expected",
                    s->local.rank, describeOp(plan->op), s->peer, size, op->bytes);
      finishReceivedChunk(plan, op);
      addRelaxed(s->bytesDone, size);
      break;
    case NetOpKind::DataSend:
      ++plan->stepDone[op->step];
      addRelaxed(s->bytesDone, size);
      break;
    case NetOpKind::CtsSend: break;
  }
  addRelaxed(s->opsLeft, static_cast<size_t>(-1));
  --plan->remaining;
  return slimecclSuccess;
}

// Tests in-flight operations oldest first, then posts those whose dependency is met.
slimecclResult_t progressLane(slimecclComm* comm, Link* link, Lane* lane, bool* moved) {
  if (lane->conn == nullptr) return slimecclSuccess;
  while (!lane->inflight.empty()) {
    NetOp* op = lane->inflight.front();
    bool done = false;
    size_t size = 0;
    if (link->net->test(op->request, &done, &size) != slimecclSuccess) {
      lane->inflight.pop_front();  // the module freed the failed request
      const slimecclResult_t rc = opError(comm, op, lane->sending);
      // A hello belongs to the link, not to an op: off the lane, nothing else frees it (complete does).
      if (op->kind == NetOpKind::Hello) complete(op, 0);
      return rc;
    }
    if (!done) break;
    lane->inflight.pop_front();
    *moved = true;
    SLIMECCL_CHECK(complete(op, size));
  }
  while (!lane->waiting.empty()) {
    NetOp* op = lane->waiting.front();
    if (op->dependency != nullptr && *op->dependency < op->needed) break;
    slimecclResult_t rc = prepare(op);
    if (rc != slimecclSuccess) return opError(comm, op, lane->sending);
    if (lane->sending)
      rc = link->net->isend(lane->conn, op->data, op->bytes, &op->request);
    else if (landsPastTheCaches(*op->plan, *op))
      rc = link->net->irecvStreaming(lane->conn, op->data, op->bytes, &op->request);
    else
      rc = link->net->irecv(lane->conn, op->data, op->bytes, &op->request);
    if (rc != slimecclSuccess) return opError(comm, op, lane->sending);
    if (op->request == nullptr) break;
    lane->waiting.pop_front();
    lane->inflight.push_back(op);
    *moved = true;
  }
  return slimecclSuccess;
}

// ---- one run ----

struct LinkUse {
  slimecclComm* comm;
  Link* link;
};

struct LaneUse {
  slimecclComm* comm;
  Link* link;
  Lane* lane;
};

struct Run {
  std::vector<OpPlan*> plans;
  std::vector<slimecclComm*> comms;
  std::vector<LinkUse> links;
  // The lanes of those links with work once the run's ops are queued (its ops, and hellos of
  // connections just made): the only ones a pass has to look at.
  std::vector<LaneUse> lanes;
  std::vector<Bell*> bells;
  // Set by the first pass that finds nothing to do: an op that never waits reads no clock.
  std::optional<Deadline> deadline;
  int64_t timeoutMs = 0;
  int spin = 0, yield = 0;

  // Takes the plans and comms and empties the rest (vectors keep their capacity).
  void reset(const std::vector<OpPlan*>& newPlans, const std::vector<slimecclComm*>& newComms) {
    plans.assign(newPlans.begin(), newPlans.end());
    comms.assign(newComms.begin(), newComms.end());
    clearState();
  }
  // A run of one plan.
  void resetTo(OpPlan* plan) {
    plans.assign(1, plan);
    comms.assign(1, plan->op.comm);
    clearState();
  }
  void clearState() {
    links.clear();
    lanes.clear();
    bells.clear();
    deadline.reset();
    timeoutMs = 0;
  }
};

// Frees the comms' shared slots of the run's slot ops when the run ends, however it ends.
class MailboxRelease {
 public:
  explicit MailboxRelease(const std::vector<OpPlan*>& plans) : plans_(plans) {}
  ~MailboxRelease() {
    for (OpPlan* plan : plans_)
      if (plan->mailbox) releaseMailbox(plan);
  }
  MailboxRelease(const MailboxRelease&) = delete;
  MailboxRelease& operator=(const MailboxRelease&) = delete;

 private:
  const std::vector<OpPlan*>& plans_;
};

bool allLinksConnected(const Run& run) {
  for (const LinkUse& use : run.links)
    if (!use.link->connected()) return false;
  return true;
}

slimecclResult_t checkInterrupts(Run& run) {
  for (slimecclComm* comm : run.comms) {
    if (comm->aborted.load()) return fail(slimecclInvalidUsage, "rank {}: the communicator was aborted", comm->rank);
    // Failed meanwhile by another thread (a host tier by its sibling, the GPU watchdog): the run
    // ends, and its links close, so its peers learn of it too.
    if (const int code = comm->asyncError.load(); code != slimecclSuccess) {
      std::lock_guard<std::mutex> lock(comm->errorMutex);
      return fail(static_cast<slimecclResult_t>(code), "rank {}: the communicator failed while the op ran: {}",
                  comm->rank, comm->failure);
    }
  }
  if (!run.deadline) run.deadline = Deadline::afterMs(run.timeoutMs);
  if (run.deadline->expired()) return slimecclTimeout;
  return slimecclSuccess;
}

// A wait long enough to block: before it, see whether a peer runs another call than this rank.
slimecclResult_t checkCalls(const Run& run) {
  for (const OpPlan* plan : run.plans) SLIMECCL_CHECK(checkAnnouncedCalls(*plan));
  return slimecclSuccess;
}

slimecclResult_t progressMailboxes(Run& run, bool* moved) {
  for (OpPlan* plan : run.plans)
    if (plan->mailbox) SLIMECCL_CHECK(progressMailbox(plan, moved));
  return slimecclSuccess;
}

// Every lane of the run's links: while connections are made, their hellos go out.
slimecclResult_t progressLinks(Run& run, bool* moved) {
  SLIMECCL_CHECK(progressMailboxes(run, moved));
  for (LinkUse& use : run.links) {
    Link* l = use.link;
    for (Lane* lane : {&l->ctrlOut, &l->ctrlIn, &l->dataOut, &l->dataIn})
      SLIMECCL_CHECK(progressLane(use.comm, l, lane, moved));
  }
  return slimecclSuccess;
}

slimecclResult_t progressAll(Run& run, bool* moved) {
  SLIMECCL_CHECK(progressMailboxes(run, moved));
  for (LaneUse& use : run.lanes) SLIMECCL_CHECK(progressLane(use.comm, use.link, use.lane, moved));
  return slimecclSuccess;
}

std::vector<WaitHint> waitHints(const Run& run) {
  std::vector<WaitHint> hints;
  for (const OpPlan* plan : run.plans)
    if (plan->mailbox && plan->remaining != 0) hints.push_back(WaitHint{-1, 0, true});
  for (const LaneUse& use : run.lanes) {
    const Lane* lane = use.lane;
    if (lane->conn == nullptr || lane->inflight.empty()) continue;
    hints.push_back(lane->sending ? use.link->net->sendWaitHint(lane->conn) : use.link->net->recvWaitHint(lane->conn));
  }
  return hints;
}

slimecclResult_t makeLinks(Run& run) {
  IdleWaiter idle(run.spin, run.yield);
  for (;;) {
    for (LinkUse& use : run.links) {
      SLIMECCL_CHECK(connectOut(use.comm, use.link, &use.link->dataOut, ConnKind::Data));
      SLIMECCL_CHECK(connectOut(use.comm, use.link, &use.link->ctrlOut, ConnKind::Ctrl));
    }
    for (slimecclComm* comm : run.comms) SLIMECCL_CHECK(acceptIn(comm));
    bool moved = false;
    SLIMECCL_CHECK(progressLinks(run, &moved));
    if (allLinksConnected(run)) return slimecclSuccess;
    SLIMECCL_CHECK(checkInterrupts(run));
    if (idle.nextWaitBlocks()) SLIMECCL_CHECK(checkCalls(run));
    // Connection setup waits on listeners the hints do not cover: poll with short sleeps.
    idle.wait({}, {}, [] { return true; });
  }
}

void enqueue(Run& run) {
  for (OpPlan* plan : run.plans) {
    for (auto& s : plan->sessions) {
      Lane* ctrl = s->sending ? &s->link->ctrlIn : &s->link->ctrlOut;
      Lane* data = s->sending ? &s->link->dataOut : &s->link->dataIn;
      size_t posted = 0;
      for (auto& op : s->ops) {
        if (op->inlined) continue;
        bool control = op->kind == NetOpKind::CtsSend || op->kind == NetOpKind::CtsRecv;
        (control ? ctrl : data)->waiting.push_back(op.get());
        ++posted;
      }
      s->opsLeft.store(posted, std::memory_order_relaxed);
    }
  }
  for (const LinkUse& use : run.links) {
    Link* l = use.link;
    for (Lane* lane : {&l->ctrlOut, &l->ctrlIn, &l->dataOut, &l->dataIn})
      if (!lane->idle()) run.lanes.push_back({use.comm, l, lane});
  }
}

bool runLocals(Run& run) {
  bool ran = false;
  for (OpPlan* plan : run.plans) ran |= runLocalSteps(plan);
  return ran;
}

bool allDone(const Run& run) {
  for (const OpPlan* plan : run.plans)
    if (plan->remaining != 0) return false;
  return true;
}

std::string stuckPeers(const OpPlan& plan) {
  std::string waits = describeWaits(plan);
  return waits.empty() ? "connection setup" : waits;
}

bool receivesDescriptor(const NetOp& op) { return op.kind == NetOpKind::CtsRecv || op.kind == NetOpKind::HeaderRecv; }

// After a lost link: a peer whose call differs from this rank's may have sent its descriptor on
// another connection before a third rank, failing on that same difference, dropped its links; a
// pass that met the dropped link first has not read it yet. Reads, for a few milliseconds, the
// descriptors at the head of the run's lanes: InvalidUsage naming both calls when one differs.
slimecclResult_t readDescriptorsOnTheirWay(Run& run) {
  constexpr int64_t kGraceMs = 20;
  const Deadline grace = Deadline::afterMs(kGraceMs);
  for (;;) {
    bool pending = false;
    for (LaneUse& use : run.lanes) {
      Lane* lane = use.lane;
      if (lane->conn == nullptr || lane->inflight.empty() || !receivesDescriptor(*lane->inflight.front())) continue;
      NetOp* op = lane->inflight.front();
      bool done = false;
      size_t size = 0;
      if (use.link->net->test(op->request, &done, &size) != slimecclSuccess) {
        lane->inflight.pop_front();  // the module freed the failed request
        continue;
      }
      if (!done) {
        pending = true;
        continue;
      }
      lane->inflight.pop_front();
      if (complete(op, size) == slimecclInvalidUsage) return slimecclInvalidUsage;
    }
    if (!pending || grace.expired()) return slimecclSuccess;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Fails every comm of the run: the first comm gets the cause, the others learn why they stopped.
// Its slot ops that published nothing publish their failure, so that their peers stop waiting.
void failRun(Run& run, slimecclResult_t code) {
  for (OpPlan* plan : run.plans)
    if (plan->mailbox) abandonMailbox(plan);
  std::string cause = threadError();
  if (code == slimecclTimeout) {
    cause.clear();
    for (OpPlan* plan : run.plans) {
      if (plan->remaining == 0) continue;
      if (!cause.empty()) cause += " | ";
      cause += fmt::format("rank {}: {} timed out after {} ms waiting on {}", plan->op.comm->rank, describeOp(plan->op),
                           run.timeoutMs, stuckPeers(*plan));
    }
    if (cause.empty()) cause = fmt::format("timed out after {} ms while making connections", run.timeoutMs);
  }
  setError(code, cause);
  for (slimecclComm* comm : run.comms) failAfterRun(comm, code, cause);
}

slimecclResult_t execute(Run& run) {
  for (OpPlan* plan : run.plans)
    for (auto& s : plan->sessions) {
      s->link = commLink(plan->op.comm, s->peer);
      bool known = false;
      for (const LinkUse& use : run.links) known |= use.link == s->link;
      if (!known) run.links.push_back({plan->op.comm, s->link});
    }
  if (!allLinksConnected(run)) SLIMECCL_CHECK(makeLinks(run));
  enqueue(run);
  IdleWaiter idle(run.spin, run.yield);
  for (;;) {
    // Net operations first: a local copy can take milliseconds, and peers that pull from this
    // rank's buffers should not wait for it to be posted.
    bool moved = false;
    SLIMECCL_CHECK(progressAll(run, &moved));
    moved |= runLocals(run);
    if (allDone(run)) return slimecclSuccess;
    if (moved) {
      idle.progressed();
      continue;
    }
    SLIMECCL_CHECK(checkInterrupts(run));
    if (idle.nextWaitBlocks()) SLIMECCL_CHECK(checkCalls(run));
    slimecclResult_t inner = slimecclSuccess;
    idle.wait(idle.nextWaitBlocks() ? waitHints(run) : std::vector<WaitHint>{}, run.bells, [&] {
      bool movedAgain = runLocals(run);
      inner = progressAll(run, &movedAgain);
      return inner == slimecclSuccess && !movedAgain && !allDone(run);
    });
    SLIMECCL_CHECK(inner);
  }
}

// Reused by the next run of this thread, for the same reason as executeOps's vectors.
Run& reusedRun() { return perThread<Run>(); }

}  // namespace

void failAfterRun(slimecclComm* comm, slimecclResult_t code, const std::string& cause) {
  // A timeout prints the flight recorder: what ran before, and what each op waits on now.
  if (code == slimecclTimeout) {
    std::string dump = comm->recorder.dump(comm->rank, comm->nranks, comm->name);
    fwrite(dump.data(), 1, dump.size(), stderr);
  }
  commFail(comm, code, cause);
  commDropLinks(comm);
}

ExecLocks::ExecLocks(std::vector<slimecclComm*>& comms) : order_(comms) {
  std::sort(comms.begin(), comms.end());
  comms.erase(std::unique(comms.begin(), comms.end()), comms.end());
  for (slimecclComm* comm : order_) comm->execMutex.lock();
}

ExecLocks::~ExecLocks() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) (*it)->execMutex.unlock();
}

namespace {

// Sets the run's waiting up for its plans and comms and runs it; on failure marks its comms failed.
slimecclResult_t runSet(Run& run) {
  int64_t timeoutMs = 0;
  for (slimecclComm* comm : run.comms) {
    // Named after an op of this comm: a group may hold ops of several.
    auto own = std::find_if(run.plans.begin(), run.plans.end(), [&](const OpPlan* p) { return p->op.comm == comm; });
    SLIMECCL_CHECK(commUsable(comm, collName((own != run.plans.end() ? *own : run.plans.front())->op.coll)));
    int64_t t = comm->params.timeoutMs;
    if (t > 0 && (timeoutMs == 0 || t < timeoutMs)) timeoutMs = t;
  }
  // Sleep on what can wake this rank: peers ring the comm's doorbell for net traffic and the
  // shared slots' bell when they publish.
  for (OpPlan* plan : run.plans) {
    slimecclComm* comm = plan->op.comm;
    Bell* bell = plan->mailbox ? comm->mailbox->bell() : comm->bell.get();
    if (std::find(run.bells.begin(), run.bells.end(), bell) == run.bells.end()) run.bells.push_back(bell);
  }
  run.timeoutMs = timeoutMs;
  run.spin = run.comms.front()->params.spinIterations;
  run.yield = run.comms.front()->params.yieldIterations;
  MailboxRelease slots(run.plans);
  slimecclResult_t rc = execute(run);
  // A peer that failed on another call than this rank's drops its links: where its call is
  // announced, or another peer's descriptor already waits to be read, the mismatch is the cause
  // to report, not the lost link.
  if (rc == slimecclRemoteError) {
    // The drain below tests requests that may fail too, each with a sentence of its module's: the
    // lost link's sentence stays the cause unless a mismatch is found.
    const std::string lostLink = threadError();
    slimecclResult_t mismatch = checkCalls(run);
    if (mismatch == slimecclSuccess) mismatch = readDescriptorsOnTheirWay(run);
    if (mismatch != slimecclSuccess)
      rc = mismatch;
    else
      setError(rc, lostLink);
  }
  if (rc != slimecclSuccess) failRun(run, rc);
  return rc;
}

// Progresses a plan carried by the shared slots in a tight loop while the idle policy would spin:
// a tiny op is done in well under a microsecond, and setting up a run would cost more than that.
// Success when done; InProgress when the spin ended first (the plan's state carries on).
slimecclResult_t spinOnSlots(OpPlan* plan) {
  IdleWaiter idle(plan->op.comm->params.spinIterations, 0);
  for (;;) {
    bool moved = false;
    SLIMECCL_CHECK(progressMailbox(plan, &moved));
    moved |= runLocalSteps(plan);
    if (plan->remaining == 0) return slimecclSuccess;
    if (moved) {
      idle.progressed();
      continue;
    }
    if (idle.nextWaitBlocks()) return slimecclInProgress;
    idle.wait({}, {}, [] { return true; });
  }
}

}  // namespace

slimecclResult_t runPlans(const std::vector<OpPlan*>& plans, const std::vector<slimecclComm*>& comms) {
  Run& run = reusedRun();
  run.reset(plans, comms);
  return runSet(run);
}

slimecclResult_t runPlan(OpPlan* plan) {
  Run& run = reusedRun();
  if (plan->mailbox != nullptr) {
    SLIMECCL_CHECK(commUsable(plan->op.comm, collName(plan->op.coll)));
    slimecclResult_t rc = spinOnSlots(plan);
    if (rc != slimecclInProgress) {
      releaseMailbox(plan);
      if (rc != slimecclSuccess) {
        run.resetTo(plan);
        failRun(run, rc);
      }
      return rc;
    }
  }
  run.resetTo(plan);
  return runSet(run);
}

}  // namespace slimeccl
