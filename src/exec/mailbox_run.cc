#include "src/exec/mailbox_run.h"

#include <algorithm>
#include <cstring>

#include "algorithms/reduce.h"
#include "src/comm.h"
#include "src/base/error.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

bool sameRange(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.bytes == b.bytes;
}

// The most bytes any rank publishes in the op, from the call alone (AlltoAll: its N - 1 blocks
// for the peers, packed; N blocks bound them).
size_t publishedBound(const OpRecord& op, int nranks) {
  return op.coll == Coll::AlltoAll ? op.bytes() * static_cast<size_t>(nranks) : op.bytes();
}

bool carriedAlgorithm(Coll coll, Algo algo) {
  switch (coll) {
    case Coll::AllGather: return algo == Algo::Direct;
    case Coll::AllReduce: return algo == Algo::OneShot;
    case Coll::AlltoAll: return algo == Algo::Pairwise;
    case Coll::Broadcast:
    case Coll::Reduce: return algo == Algo::Tree;
    default: return false;
  }
}

// Writes the call and op number after the bytes; without bytes (sends empty) when the op failed
// here first, so that the peers still see this rank's call and fail naming it instead of waiting.
void publishHead(const OpPlan& plan, MailboxHead* mine, MailboxEntry uniform, bool failed, uint64_t seq, Mailbox* box) {
  mine->uniform = uniform;
  mine->failed = failed ? 1 : 0;
  mine->count = plan.op.count;
  mine->collSeq = plan.op.seq;
  mine->root = plan.op.root;
  mine->coll = static_cast<uint8_t>(plan.op.coll);
  mine->type = static_cast<uint8_t>(plan.op.type);
  mine->redOp = static_cast<uint8_t>(plan.op.redOp);
  mine->seq.store(seq, std::memory_order_release);
  box->bell()->ring();
}

slimecclResult_t publish(OpPlan* plan, MailboxProgress& m, Mailbox* box, int rank, int nranks) {
  const uint64_t seq = m.seq.load(std::memory_order_relaxed);
  MailboxHead* mine = box->slot(rank, seq);
  MailboxEntry* directory = box->directory(mine);
  char* data = box->data(mine);
  for (int p = 0; p < nranks; ++p) directory[p] = MailboxEntry{0, kNoEntry};
  size_t used = 0;
  bool uniform = true;
  for (size_t k = 0; k < m.sends.size(); ++k) {
    const Step& st = plan->schedule.steps[m.sends[k]];
    MailboxEntry entry{0, kNoEntry};
    for (size_t j = 0; j < k; ++j) {
      const Step& earlier = plan->schedule.steps[m.sends[j]];
      if (sameRange(earlier.src, st.src)) entry = directory[earlier.peer];
    }
    if (entry.bytes == kNoEntry) {
      if (used + st.src.bytes > box->capacity())
        return fail(slimecclInternalError, "rank {}: {}: {} bytes to publish exceed the {}-byte shared slot", rank,
                    describeOp(plan->op), used + st.src.bytes, box->capacity());
      memcpy(data + used, plan->address(st.src), st.src.bytes);
      entry = MailboxEntry{static_cast<uint32_t>(used), static_cast<uint32_t>(st.src.bytes)};
      uniform = uniform && used == 0;
      used += st.src.bytes;
    }
    directory[st.peer] = entry;
  }
  publishHead(
      *plan, mine,
      uniform && !m.sends.empty() ? directory[plan->schedule.steps[m.sends[0]].peer] : MailboxEntry{0, kNoEntry}, false,
      seq, box);
  for (int step : m.sends) {
    plan->stepDone[step] = 1;
    --plan->remaining;
  }
  m.published.store(true, std::memory_order_relaxed);
  return slimecclSuccess;
}

// Compares the peer's call with this rank's (InvalidUsage naming both when they differ).
slimecclResult_t checkPeer(const OpPlan& plan, const MailboxHead* theirs, int rank, int peer) {
  const OpRecord& op = plan.op;
  if (theirs->count == op.count && theirs->collSeq == op.seq && theirs->root == op.root &&
      theirs->coll == static_cast<uint8_t>(op.coll) && theirs->type == static_cast<uint8_t>(op.type) &&
      theirs->redOp == static_cast<uint8_t>(op.redOp))
    return slimecclSuccess;
  // Something differs: let the descriptor check name both calls.
  OpDesc mine, other;
  fillDesc(op, rank, 0, &mine);
  other = mine;
  other.rank = peer;
  other.coll = theirs->coll;
  other.type = theirs->type;
  other.redOp = theirs->redOp;
  other.root = theirs->root;
  other.seq = theirs->collSeq;
  other.count = theirs->count;
  return checkPeerDesc(plan.op, mine, other, peer, false);
}

slimecclResult_t receive(OpPlan* plan, Mailbox* box, const Step& st, uint64_t seq, int rank) {
  MailboxHead* theirs = box->slot(st.peer, seq);
  MailboxEntry entry = theirs->uniform.bytes != kNoEntry ? theirs->uniform : box->directory(theirs)[rank];
  if (entry.bytes != st.dst.bytes)
    return fail(slimecclRemoteError, "rank {}: {}: peer {} published {} bytes for this rank where {} were expected",
                rank, describeOp(plan->op), st.peer, entry.bytes == kNoEntry ? 0 : entry.bytes, st.dst.bytes);
  const char* in = box->data(theirs) + entry.offset;
  if (st.kind == StepKind::RecvReduce) {
    size_t elem = typeSize(plan->op.type);
    reduceArrays(plan->address(st.dst), plan->address(st.src), in, st.dst.bytes / elem, plan->op.type, plan->op.redOp);
  } else {
    memcpy(plan->address(st.dst), in, st.dst.bytes);
  }
  if (plan->blockWatch != nullptr) plan->blockWatch->wrote(st.dst);
  return slimecclSuccess;
}

slimecclResult_t advance(OpPlan* plan, MailboxProgress& m, Mailbox* box, int rank, int nranks, bool* moved) {
  const uint64_t seq = m.seq.load(std::memory_order_relaxed);
  // Local steps first: the sends of most carried algorithms wait only on them.
  *moved |= runLocalSteps(plan);
  if (!m.published.load(std::memory_order_relaxed)) {
    bool ready = true;
    for (int step : m.sends) ready = ready && plan->dependencyMet(step, 0);
    if (ready) {
      SLIMECCL_CHECK(publish(plan, m, box, rank, nranks));
      *moved = true;
    }
  }
  // A peer that failed is reported only if no peer's call differs: a mismatch is the cause to name.
  int failedPeer = -1;
  for (int p = 0; p < nranks && m.unseen > 0; ++p) {
    if (p == rank || m.seen[p]) continue;
    MailboxHead* theirs = box->slot(p, seq);
    if (theirs->seq.load(std::memory_order_acquire) != seq) {
      // Prefetches, not loads: the peer may be writing those lines now.
      for (int line = 1; line <= m.linesFrom[p]; ++line)
        __builtin_prefetch(reinterpret_cast<const char*>(theirs) + line * sizeof(MailboxHead));
      continue;
    }
    SLIMECCL_CHECK(checkPeer(*plan, theirs, rank, p));
    if (theirs->failed && failedPeer < 0) failedPeer = p;
    m.seen[p] = 1;
    --m.unseen;
    *moved = true;
  }
  if (failedPeer >= 0)
    return fail(slimecclRemoteError, "rank {}: {}: peer {} failed this op on its side (its error names the cause)",
                rank, describeOp(plan->op), failedPeer);
  for (size_t k = 0; k < m.receives.size(); ++k) {
    int step = m.receives[k];
    const Step& st = plan->schedule.steps[step];
    if (m.received[k] || !m.seen[st.peer] || !plan->dependencyMet(step, 0)) continue;
    SLIMECCL_CHECK(receive(plan, box, st, seq, rank));
    m.received[k] = 1;
    plan->stepDone[step] = 1;
    --plan->remaining;
    *moved = true;
  }
  if (m.unseen == 0 && !m.everyoneSeen) {
    m.everyoneSeen = true;
    --plan->remaining;
  }
  return slimecclSuccess;
}

}  // namespace

void MailboxProgress::rearm() {
  seq.store(0, std::memory_order_relaxed);
  published.store(false, std::memory_order_relaxed);
  everyoneSeen = false;
  std::fill(received.begin(), received.end(), 0);
  std::fill(seen.begin(), seen.end(), 0);
  unseen = static_cast<int>(seen.size()) - 1;
}

bool mailboxCarries(const slimecclComm* comm, const OpRecord& op, Algo algo) {
  return comm->mailbox != nullptr && !op.isP2P() && op.bytes() != 0 && carriedAlgorithm(op.coll, algo) &&
         publishedBound(op, comm->nranks) <= comm->mailbox->capacity();
}

void lowerForMailbox(OpPlan* plan) {
  const std::vector<Step>& steps = plan->schedule.steps;
  int nranks = plan->op.comm->nranks;
  plan->nranks = nranks;
  plan->scratch = StagingBuffer(plan->schedule.scratchBytes, homeNumaNodeToUse());
  plan->stepDone.assign(steps.size(), 0);
  plan->stepMessages.assign(steps.size(), 1);
  auto m = std::make_unique<MailboxProgress>();
  for (size_t i = 0; i < steps.size(); ++i) {
    switch (steps[i].kind) {
      case StepKind::Send: m->sends.push_back(static_cast<int>(i)); break;
      case StepKind::Recv:
      case StepKind::RecvReduce: m->receives.push_back(static_cast<int>(i)); break;
      default: plan->locals.push_back(LocalTask{static_cast<int>(i)}); break;
    }
  }
  m->received.assign(m->receives.size(), 0);
  m->seen.assign(nranks, 0);
  m->linesFrom.assign(nranks, 0);
  for (int step : m->receives) {
    const Step& st = steps[step];
    const size_t line = sizeof(MailboxHead);
    const size_t past = st.dst.bytes > kHeadBytes ? (st.dst.bytes - kHeadBytes + line - 1) / line : 0;
    m->linesFrom[st.peer] =
        static_cast<uint8_t>(std::min({std::max<size_t>(m->linesFrom[st.peer], past), kMailboxWarmedLines}));
  }
  m->rearm();
  // Every step, plus the wait for every peer's slot.
  plan->remaining = steps.size() + 1;
  plan->total = plan->remaining;
  plan->mailbox = std::move(m);
}

slimecclResult_t progressMailbox(OpPlan* plan, bool* moved) {
  MailboxProgress& m = *plan->mailbox;
  slimecclComm* comm = plan->op.comm;
  Mailbox* box = comm->mailbox.get();
  if (m.seq.load(std::memory_order_relaxed) == 0) {
    // One slot op of a comm at a time: a later one in the same group waits for the earlier.
    if (comm->mailboxActive != nullptr && comm->mailboxActive != plan) return slimecclSuccess;
    comm->mailboxActive = plan;
    m.seq.store(box->nextSeq(), std::memory_order_relaxed);
  }
  if (plan->remaining == 0) {
    releaseMailbox(plan);
    return slimecclSuccess;
  }
  return advance(plan, m, box, comm->rank, comm->nranks, moved);
}

slimecclResult_t checkAnnouncedCalls(const OpPlan& plan) {
  const slimecclComm* comm = plan.op.comm;
  if (comm->mailbox == nullptr || plan.op.isP2P() || plan.remaining == 0) return slimecclSuccess;
  OpDesc mine, theirs;
  fillDesc(plan.op, comm->rank, 0, &mine);
  for (int p = 0; p < comm->nranks; ++p) {
    if (p == comm->rank || !comm->mailbox->announced(p, &theirs) || theirs.seq != mine.seq) continue;
    SLIMECCL_CHECK(checkPeerDesc(plan.op, mine, theirs, p, false));
  }
  return slimecclSuccess;
}

void abandonMailbox(OpPlan* plan) {
  MailboxProgress& m = *plan->mailbox;
  uint64_t seq = m.seq.load(std::memory_order_relaxed);
  if (seq == 0 || m.published.load(std::memory_order_relaxed)) return;
  Mailbox* box = plan->op.comm->mailbox.get();
  publishHead(*plan, box->slot(plan->op.comm->rank, seq), MailboxEntry{0, kNoEntry}, true, seq, box);
  m.published.store(true, std::memory_order_relaxed);
}

void releaseMailbox(OpPlan* plan) {
  slimecclComm* comm = plan->op.comm;
  if (comm->mailboxActive == plan) comm->mailboxActive = nullptr;
}

std::string describeMailboxWaits(const OpPlan& plan) {
  const MailboxProgress& m = *plan.mailbox;
  const slimecclComm* comm = plan.op.comm;
  uint64_t seq = m.seq.load(std::memory_order_relaxed);
  if (seq == 0) return "its turn on the shared slots (an earlier op of this comm holds them)";
  // Read from the slots themselves: this may run on another thread than the op's.
  std::string out;
  for (int p = 0; p < comm->nranks; ++p) {
    uint64_t theirs = comm->mailbox->slot(p, seq)->seq.load(std::memory_order_acquire);
    if (p == comm->rank || theirs == seq) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("peer {} (nothing in its shared slot for this op yet)", p);
  }
  if (out.empty() && !m.published.load(std::memory_order_relaxed)) out = "this rank's own data, to publish";
  return out;
}

}  // namespace slimeccl
