#include "src/exec/plan.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "algorithms/reduce.h"
#include "src/base/error.h"
#include "src/exec/mailbox_run.h"
#include "src/exec/session_header.h"
#include "src/base/sys/stream_copy.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

size_t chunksOf(size_t bytes, size_t chunkBytes) { return bytes / chunkBytes + (bytes % chunkBytes != 0); }

bool isLocal(StepKind kind) { return kind == StepKind::Copy || kind == StepKind::Reduce || kind == StepKind::Scale; }

NetOp* addOp(Session* s, OpPlan* plan, NetOpKind kind, char* data, size_t bytes) {
  s->ops.push_back(std::make_unique<NetOp>());
  NetOp* op = s->ops.back().get();
  op->kind = kind;
  op->data = data;
  op->bytes = bytes;
  op->plan = plan;
  op->session = s;
  ++plan->remaining;
  return op;
}

// A session's first ops: control first (a receiver's descriptor travels back to the sender),
// unless the session is eager, then the header, which carries the sender's descriptor.
Session* openSession(OpPlan* plan, int peer, bool sending, bool eager) {
  plan->sessions.push_back(std::make_unique<Session>());
  Session* s = plan->sessions.back().get();
  s->peer = peer;
  s->sending = sending;
  if (!eager)
    addOp(s, plan, sending ? NetOpKind::CtsRecv : NetOpKind::CtsSend,
          reinterpret_cast<char*>(sending ? &s->remote : &s->local), sizeof(OpDesc));
  s->header = addOp(s, plan, sending ? NetOpKind::HeaderSend : NetOpKind::HeaderRecv, nullptr, 0);
  return s;
}

// Chunk c of a step waits for chunk c of its dependency when both have the same chunking (data
// streams through), else for the whole dependency.
void setDependency(OpPlan* plan, NetOp* op, int stepIndex, size_t chunk) {
  int dep = plan->schedule.steps[stepIndex].dependsOn;
  if (dep < 0) return;
  bool sameShape = plan->stepMessages[dep] == plan->stepMessages[stepIndex];
  op->dependency = &plan->stepDone[dep];
  op->needed = sameShape ? chunk + 1 : plan->stepMessages[dep];
}

// Adds the data chunks of one step to its session. The session's first chunk rides inside the
// header message when small: it is recorded as an op that the header's completion finishes.
void lowerStep(OpPlan* plan, Session* s, int stepIndex, size_t chunkBytes) {
  const Step& step = plan->schedule.steps[stepIndex];
  char* base;
  size_t bytes;
  if (s->sending) {
    base = plan->address(step.src);
    bytes = step.src.bytes;
  } else {
    bytes = step.dst.bytes;
    base = step.kind == StepKind::RecvReduce ? plan->staging[stepIndex].data() : plan->address(step.dst);
  }
  size_t chunks = plan->stepMessages[stepIndex];
  for (size_t c = 0; c < chunks; ++c) {
    size_t offset = c * chunkBytes;
    size_t len = std::min(chunkBytes, bytes - offset);
    bool first = s->bytesTotal == 0;
    s->bytesTotal += len;
    auto op = std::make_unique<NetOp>();
    op->kind = s->sending ? NetOpKind::DataSend : NetOpKind::DataRecv;
    op->data = base + offset;
    op->bytes = len;
    op->plan = plan;
    op->session = s;
    op->step = stepIndex;
    op->chunk = c;
    op->offset = offset;
    setDependency(plan, op.get(), stepIndex, c);
    if (first && len <= kInlineBytes) {
      op->inlined = true;
      s->inlineChunk = op.get();
    } else {
      ++plan->remaining;
    }
    s->ops.push_back(std::move(op));
  }
}

}  // namespace

char* OpPlan::address(const BufferRange& range) {
  char* base = range.buffer == BufferId::Send   ? static_cast<char*>(const_cast<void*>(op.sendbuff))
               : range.buffer == BufferId::Recv ? static_cast<char*>(op.recvbuff)
                                                : scratch.data();
  return base + range.offset;
}

bool OpPlan::dependencyMet(int step, size_t) const {
  int dep = schedule.steps[step].dependsOn;
  return dep < 0 || stepDone[dep] >= stepMessages[dep];
}

void fillDesc(const OpRecord& op, int rank, uint64_t sessionBytes, OpDesc* desc) {
  memset(desc, 0, sizeof(*desc));
  desc->magic = kOpDescMagic;
  desc->isP2P = op.isP2P() ? 1 : 0;
  desc->coll = static_cast<uint8_t>(op.coll);
  desc->type = static_cast<uint8_t>(op.type);
  desc->redOp = static_cast<uint8_t>(op.redOp);
  desc->root = op.root;
  desc->rank = rank;
  desc->seq = op.seq;
  desc->count = op.count;
  desc->bytes = sessionBytes;
}

void lowerSchedule(OpPlan* plan, int rank, int nranks, size_t chunkBytes) {
  const std::vector<Step>& steps = plan->schedule.steps;
  plan->nranks = nranks;
  int node = homeNumaNodeToUse();
  plan->scratch = StagingBuffer(plan->schedule.scratchBytes, node);
  plan->staging.resize(steps.size());
  plan->stepDone.assign(steps.size(), 0);
  plan->stepMessages.assign(steps.size(), 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (isLocal(st.kind)) {
      plan->stepMessages[i] = 1;
      plan->locals.push_back(LocalTask{static_cast<int>(i)});
      ++plan->remaining;
      continue;
    }
    size_t bytes = st.kind == StepKind::Send ? st.src.bytes : st.dst.bytes;
    plan->stepMessages[i] = chunksOf(bytes, chunkBytes);
    if (st.kind == StepKind::RecvReduce) plan->staging[i] = StagingBuffer(bytes, node);
  }
  // One session per (peer, direction), in the order the schedule first uses it.
  std::map<std::pair<int, bool>, Session*> byPeer;
  bool eager = plan->op.isP2P() && plan->op.bytes() <= kInlineBytes;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (isLocal(st.kind)) continue;
    bool sending = st.kind == StepKind::Send;
    Session*& s = byPeer[{st.peer, sending}];
    if (s == nullptr) s = openSession(plan, st.peer, sending, eager);
    lowerStep(plan, s, static_cast<int>(i), chunkBytes);
  }
  // A rooted collective's schedule can leave a rank only sending to a peer or only receiving from
  // it: two ranks given different roots may then both send to each other (or both wait), with no
  // descriptor to compare, and wait for the timeout. A session from each rank to the next one,
  // empty where the schedule has none, makes every rank compare its call with both neighbours':
  // some pair of neighbours differs whenever any two ranks do.
  bool rooted = plan->op.coll == Coll::Broadcast || plan->op.coll == Coll::Reduce;
  if (rooted && nranks > 1) {
    int next = (rank + 1) % nranks;
    int prev = (rank + nranks - 1) % nranks;
    if (byPeer.count({next, true}) == 0) openSession(plan, next, true, false);
    if (byPeer.count({prev, false}) == 0) openSession(plan, prev, false, false);
  }
  for (auto& s : plan->sessions) {
    fillDesc(plan->op, rank, s->bytesTotal, &s->local);
    size_t inlined = s->inlineChunk ? s->inlineChunk->bytes : 0;
    s->shortHeader = eager && s->sending && inlined == s->bytesTotal;
    // The header's buffer is the staging area.
    NetOp* header = s->header;
    // Not zeroed: the sender fills what it sends, the receiver reads only what arrived.
    s->stagingBytes = sizeof(OpDesc) + kInlineBytes;
    s->staging.reset(new char[s->stagingBytes]);
    header->data = s->staging.get();
    header->bytes = s->sending ? headerBytes(s->shortHeader) + inlined : s->stagingBytes;
    if (s->inlineChunk != nullptr) {
      // The header now waits for what the inline chunk waits for; the chunk leaves the lane.
      header->dependency = s->inlineChunk->dependency;
      header->needed = s->inlineChunk->needed;
    }
  }
  plan->total = plan->remaining;
}

void rearmPlan(OpPlan* plan, const OpRecord& op, int rank) {
  plan->op = op;
  std::fill(plan->stepDone.begin(), plan->stepDone.end(), 0);
  for (LocalTask& task : plan->locals) task.done = false;
  plan->remaining = plan->total;
  if (plan->mailbox) plan->mailbox->rearm();
  for (auto& s : plan->sessions) {
    fillDesc(op, rank, s->bytesTotal, &s->local);
    s->remoteSeen.store(false, std::memory_order_relaxed);
    s->bytesDone.store(0, std::memory_order_relaxed);
    s->opsLeft.store(0, std::memory_order_relaxed);
    for (auto& netOp : s->ops) netOp->request = nullptr;
  }
}

void finishReceivedChunk(OpPlan* plan, NetOp* op) {
  const Step& st = plan->schedule.steps[op->step];
  if (st.kind == StepKind::RecvReduce) {
    size_t elem = typeSize(plan->op.type);
    char* out = plan->address(st.dst) + op->offset;
    const char* local = plan->address(st.src) + op->offset;
    reduceArrays(out, local, op->data, op->bytes / elem, plan->op.type, plan->op.redOp);
  }
  ++plan->stepDone[op->step];
  if (plan->blockWatch != nullptr)
    plan->blockWatch->wrote(BufferRange{st.dst.buffer, st.dst.offset + op->offset, op->bytes});
}

namespace {

// Streaming stores only for the user's receive buffer: staging and scratch are read again soon.
bool streamsInto(const OpPlan& plan, const BufferRange& dst) {
  return plan.streamingStores && dst.buffer == BufferId::Recv;
}

}  // namespace

bool landsPastTheCaches(const OpPlan& plan, const NetOp& op) {
  if (op.kind != NetOpKind::DataRecv) return false;
  const Step& st = plan.schedule.steps[op.step];
  return st.kind == StepKind::Recv && streamsInto(plan, st.dst);
}

bool runLocalSteps(OpPlan* plan) {
  bool ran = false;
  for (LocalTask& task : plan->locals) {
    if (task.done) continue;
    // Local steps run in list order: stop at the first one that cannot run yet.
    if (!plan->dependencyMet(task.step, 0)) break;
    const Step& st = plan->schedule.steps[task.step];
    size_t elem = typeSize(plan->op.type);
    switch (st.kind) {
      case StepKind::Copy: {
        char* src = plan->address(st.src);
        char* dst = plan->address(st.dst);
        size_t n = st.src.bytes;
        bool disjoint = src + n <= dst || dst + n <= src;
        if (disjoint && streamsInto(*plan, st.dst))
          copyStreaming(dst, src, n);
        else if (src != dst)
          memmove(dst, src, n);
        if (plan->blockWatch != nullptr) plan->blockWatch->wrote(st.dst);
        break;
      }
      case StepKind::Reduce:
        reduceArrays(plan->address(st.dst), plan->address(st.dst), plan->address(st.src), st.dst.bytes / elem,
                     plan->op.type, plan->op.redOp);
        break;
      case StepKind::Scale: divideArray(plan->address(st.dst), st.dst.bytes / elem, plan->op.type, plan->nranks); break;
      default: break;
    }
    task.done = true;
    plan->stepDone[task.step] = 1;
    --plan->remaining;
    ran = true;
  }
  return ran;
}

std::string describeWaits(const OpPlan& plan) {
  if (plan.mailbox) return describeMailboxWaits(plan);
  std::string out;
  for (const auto& s : plan.sessions) {
    if (s->opsLeft.load() == 0) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("peer {} ({} {} of {} bytes{})", s->peer, s->sending ? "sent" : "received", s->bytesDone.load(),
                       s->bytesTotal, s->remoteSeen.load() ? "" : ", nothing from the peer on this op yet");
  }
  return out;
}

slimecclResult_t checkPeerDesc(const OpPlan& plan, const Session& s) {
  return checkPeerDesc(plan.op, s.local, s.remote, s.peer, s.sending);
}

slimecclResult_t checkPeerDesc(const OpRecord& op, const OpDesc& mine, const OpDesc& theirs, int peer, bool sending) {
  int rank = mine.rank;
  if (theirs.magic != kOpDescMagic || theirs.rank != peer)
    return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a corrupt descriptor", rank, describeOp(op), peer);
  // A Send meets a Recv; a collective meets the same collective.
  uint8_t expectedColl = mine.coll;
  if (mine.isP2P)
    expectedColl = static_cast<uint8_t>(mine.coll == static_cast<uint8_t>(Coll::Send) ? Coll::Recv : Coll::Send);
  if (mine.isP2P != theirs.isP2P || theirs.coll != expectedColl ||
      (!mine.isP2P && (mine.seq != theirs.seq || mine.count != theirs.count || mine.type != theirs.type ||
                       mine.root != theirs.root || mine.redOp != theirs.redOp))) {
    auto call = [](const OpDesc& d) {
      if (d.isP2P) return fmt::format("{}({} bytes)", collName(static_cast<Coll>(d.coll)), d.bytes);
      // A peer's type and op bytes may be no enum value: casting them would be undefined.
      Coll coll = static_cast<Coll>(d.coll);
      bool reduces = coll == Coll::AllReduce || coll == Coll::ReduceScatter || coll == Coll::Reduce;
      bool rooted = coll == Coll::Broadcast || coll == Coll::Reduce;
      std::string op = !reduces ? ""
                       : d.redOp < slimecclNumOps
                           ? fmt::format(", {}", redOpName(static_cast<slimecclRedOp_t>(d.redOp)))
                           : std::string(", invalid-op");
      return fmt::format("{}(count={}, {}{}{}, seq {})", collName(coll), d.count,
                         d.type < slimecclNumTypes ? typeName(static_cast<slimecclDataType_t>(d.type)) : "invalid-type",
                         op, rooted ? fmt::format(", root {}", d.root) : "", d.seq);
    };
    return fail(slimecclInvalidUsage, "rank {} called {} but rank {} called {}", rank, call(mine), peer, call(theirs));
  }
  if (mine.bytes != theirs.bytes) {
    if (mine.isP2P)
      return fail(slimecclInvalidUsage, "rank {}: {} of {} bytes does not match peer {}'s {} of {} bytes", rank,
                  sending ? "Send to peer " + std::to_string(peer) : "Recv from peer " + std::to_string(peer),
                  mine.bytes, peer, sending ? "Recv" : "Send", theirs.bytes);
    return fail(slimecclInvalidUsage, "rank {}: {}: peer {} expects {} bytes in this direction, this rank {}", rank,
                describeOp(op), peer, theirs.bytes, mine.bytes);
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
