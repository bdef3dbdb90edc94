#include "src/exec/plan.h"

#include <cstring>
#include <map>

#include "src/error.h"

namespace slimeccl {
namespace {

char* bufferBase(const OpRecord& op, BufferId id) {
  return id == BufferId::Send ? static_cast<char*>(const_cast<void*>(op.sendbuff)) : static_cast<char*>(op.recvbuff);
}

size_t chunksOf(size_t bytes, size_t chunkBytes) { return (bytes + chunkBytes - 1) / chunkBytes; }

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

// Adds the data operations of one step to its session; the first chunk of the session may ride
// inside the header message.
void lowerStep(OpPlan* plan, Session* s, int stepIndex, size_t chunkBytes) {
  const Step& step = plan->schedule.steps[stepIndex];
  const BufferRange& range = s->sending ? step.src : step.dst;
  char* base = bufferBase(plan->op, range.buffer) + range.offset;
  size_t chunks = plan->stepMessages[stepIndex];
  for (size_t c = 0; c < chunks; ++c) {
    size_t offset = c * chunkBytes;
    size_t len = std::min(chunkBytes, range.bytes - offset);
    bool first = s->bytesTotal == 0;
    s->bytesTotal += len;
    if (first && len <= kInlineBytes) {
      s->firstInline = true;
      s->inlineData = base + offset;
      s->inlineBytes = len;
      s->inlineStep = stepIndex;
      continue;
    }
    NetOp* op = addOp(s, plan, s->sending ? NetOpKind::DataSend : NetOpKind::DataRecv, base + offset, len);
    op->step = stepIndex;
    if (s->sending && step.dependsOn >= 0) {
      op->dependency = &plan->stepDone[step.dependsOn];
      bool sameShape = plan->stepMessages[step.dependsOn] == chunks;
      op->needed = sameShape ? c + 1 : plan->stepMessages[step.dependsOn];
    }
  }
}

}  // namespace

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

void lowerSchedule(OpPlan* plan, int rank, size_t chunkBytes) {
  const std::vector<Step>& steps = plan->schedule.steps;
  plan->stepDone.assign(steps.size(), 0);
  plan->stepMessages.assign(steps.size(), 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (st.kind == StepKind::Copy) {
      plan->copies.push_back(CopyTask{bufferBase(plan->op, st.src.buffer) + st.src.offset,
                                      bufferBase(plan->op, st.dst.buffer) + st.dst.offset, st.src.bytes});
      ++plan->remaining;
      continue;
    }
    size_t bytes = st.kind == StepKind::Send ? st.src.bytes : st.dst.bytes;
    plan->stepMessages[i] = chunksOf(bytes, chunkBytes);
  }
  // One session per (peer, direction), in the order the schedule first uses it.
  std::map<std::pair<int, bool>, Session*> byPeer;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (st.kind == StepKind::Copy) continue;
    bool sending = st.kind == StepKind::Send;
    Session*& s = byPeer[{st.peer, sending}];
    if (s == nullptr) {
      plan->sessions.push_back(std::make_unique<Session>());
      s = plan->sessions.back().get();
      s->peer = st.peer;
      s->sending = sending;
      // Control first: a receiver's descriptor travels back to the sender.
      addOp(s, plan, sending ? NetOpKind::CtsRecv : NetOpKind::CtsSend, reinterpret_cast<char*>(sending ? &s->remote : &s->local),
            sizeof(OpDesc));
      addOp(s, plan, sending ? NetOpKind::HeaderSend : NetOpKind::HeaderRecv, nullptr, 0);
    }
    lowerStep(plan, s, static_cast<int>(i), chunkBytes);
  }
  for (auto& s : plan->sessions) {
    fillDesc(plan->op, rank, s->bytesTotal, &s->local);
    // The header op is the session's second op; its buffer is the staging area.
    NetOp* header = s->ops[1].get();
    s->staging.assign(sizeof(OpDesc) + kInlineBytes, 0);
    header->data = s->staging.data();
    header->bytes = s->sending ? sizeof(OpDesc) + (s->firstInline ? s->inlineBytes : 0) : s->staging.size();
    if (s->sending && s->firstInline) {
      const Step& st = steps[s->inlineStep];
      if (st.dependsOn >= 0) {
        bool sameShape = plan->stepMessages[st.dependsOn] == plan->stepMessages[s->inlineStep];
        header->dependency = &plan->stepDone[st.dependsOn];
        header->needed = sameShape ? 1 : plan->stepMessages[st.dependsOn];
      }
    }
  }
}

slimecclResult_t checkPeerDesc(const OpPlan& plan, const Session& s) {
  const OpDesc& mine = s.local;
  const OpDesc& theirs = s.remote;
  int rank = mine.rank;
  if (theirs.magic != kOpDescMagic || theirs.rank != s.peer)
    return fail(slimecclRemoteError, "rank {}: {}: peer {} sent a corrupt descriptor", rank, describeOp(plan.op), s.peer);
  // A Send meets a Recv; a collective meets the same collective.
  uint8_t expectedColl = mine.coll;
  if (mine.isP2P)
    expectedColl = static_cast<uint8_t>(mine.coll == static_cast<uint8_t>(Coll::Send) ? Coll::Recv : Coll::Send);
  if (mine.isP2P != theirs.isP2P || theirs.coll != expectedColl ||
      (!mine.isP2P && (mine.seq != theirs.seq || mine.count != theirs.count || mine.type != theirs.type ||
                       mine.root != theirs.root || mine.redOp != theirs.redOp))) {
    auto call = [](const OpDesc& d) {
      if (d.isP2P)
        return fmt::format("{}({} bytes)", collName(static_cast<Coll>(d.coll)), d.bytes);
      return fmt::format("{}(count={}, {}, seq {})", collName(static_cast<Coll>(d.coll)), d.count,
                         typeName(static_cast<slimecclDataType_t>(d.type)), d.seq);
    };
    return fail(slimecclInvalidUsage, "rank {} called {} but rank {} called {}", rank, call(mine), s.peer,
                call(theirs));
  }
  if (mine.bytes != theirs.bytes) {
    if (mine.isP2P)
      return fail(slimecclInvalidUsage,
                  "rank {}: {} of {} bytes does not match peer {}'s {} of {} bytes", rank,
                  s.sending ? "Send to peer " + std::to_string(s.peer) : "Recv from peer " + std::to_string(s.peer),
                  mine.bytes, s.peer, s.sending ? "Recv" : "Send", theirs.bytes);
    return fail(slimecclInvalidUsage, "rank {}: {}: peer {} expects {} bytes in this direction, this rank {}", rank,
                describeOp(plan.op), s.peer, theirs.bytes, mine.bytes);
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
