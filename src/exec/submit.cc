#include "src/exec/submit.h"

#include <algorithm>
#include <map>
#include <memory>

#include "algorithms/select.h"
#include "src/comm.h"
#include "src/error.h"
#include "src/exec/executor.h"
#include "src/stream.h"

namespace slimeccl {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<OpRecord> ops;
};
thread_local GroupState group;

bool isInPlace(const OpRecord& op) {
  if (op.coll == Coll::AllGather)
    return static_cast<const char*>(op.sendbuff) == static_cast<char*>(op.recvbuff) + op.comm->rank * op.bytes();
  return false;
}

std::unique_ptr<OpPlan> planFor(const OpRecord& op) {
  auto plan = std::make_unique<OpPlan>();
  plan->op = op;
  ScheduleRequest request{op.coll, op.bytes(), op.peer, isInPlace(op), op.comm->nranks, op.comm->rank};
  plan->schedule = buildSchedule(request);
  lowerSchedule(plan.get(), op.comm->rank, op.comm->nranks, op.comm->params.chunkBytes);
  SLIMECCL_TRACE(kLogColl, op.comm->rank, "{}:\n{}", describeOp(op), describeSchedule(plan->schedule));
  return plan;
}

// Runs or queues ops that share one stream (nullptr: the calling thread).
slimecclResult_t dispatch(slimecclStream_t stream, std::vector<OpRecord> ops) {
  if (stream != nullptr) return streamEnqueue(stream, std::move(ops));
  slimecclResult_t rc = executeOps(ops);
  for (const OpRecord& op : ops) opFinished(op.comm);
  return rc;
}

// The bytes an op writes on this rank.
std::pair<const char*, size_t> destination(const OpRecord& op) {
  switch (op.coll) {
    case Coll::Recv: return {static_cast<const char*>(op.recvbuff), op.bytes()};
    case Coll::AllGather: return {static_cast<const char*>(op.recvbuff), op.bytes() * op.comm->nranks};
    default: return {nullptr, 0};
  }
}

bool overlaps(const char* a, size_t aLen, const char* b, size_t bLen) { return a < b + bLen && b < a + aLen; }

// A Send whose source is also written by a receive of the same group (in-place sendrecv) must
// read its data before any of it is overwritten: it sends from a snapshot taken now.
void snapshotOverwrittenSends(std::vector<OpRecord>& ops, std::vector<std::vector<char>>& snapshots) {
  for (OpRecord& send : ops) {
    if (send.coll != Coll::Send) continue;
    const char* src = static_cast<const char*>(send.sendbuff);
    for (const OpRecord& other : ops) {
      auto [dst, len] = destination(other);
      if (other.comm != send.comm || dst == nullptr || !overlaps(src, send.bytes(), dst, len)) continue;
      snapshots.emplace_back(src, src + send.bytes());
      send.sendbuff = snapshots.back().data();
      break;
    }
  }
}

}  // namespace

slimecclResult_t executeOps(const std::vector<OpRecord>& requested) {
  // Both ends of a link must queue sessions in the same order whatever order the calls of a group
  // came in: collectives first, by sequence number, then point-to-point in call order (which is
  // the order between any one pair of ranks).
  std::vector<OpRecord> ops = requested;
  std::stable_sort(ops.begin(), ops.end(), [](const OpRecord& a, const OpRecord& b) {
    if (a.isP2P() != b.isP2P()) return !a.isP2P();
    return !a.isP2P() && a.comm == b.comm && a.seq < b.seq;
  });
  std::vector<std::vector<char>> snapshots;
  snapshots.reserve(ops.size());
  snapshotOverwrittenSends(ops, snapshots);
  std::vector<std::unique_ptr<OpPlan>> owned;
  std::vector<OpPlan*> plans;
  for (const OpRecord& op : ops) {
    owned.push_back(planFor(op));
    plans.push_back(owned.back().get());
  }
  return plans.empty() ? slimecclSuccess : runPlans(plans);
}

slimecclResult_t submitOp(OpRecord op) {
  slimecclComm* comm = op.comm;
  switch (op.coll) {
    case Coll::Send: op.seq = comm->sendSeq[op.peer]++; break;
    case Coll::Recv: op.seq = comm->recvSeq[op.peer]++; break;
    default: op.seq = comm->collSeq++; break;
  }
  opStarted(comm);
  if (group.depth > 0) {
    group.ops.push_back(op);
    return slimecclSuccess;
  }
  return dispatch(op.stream, {op});
}

slimecclResult_t groupStart() {
  ++group.depth;
  return slimecclSuccess;
}

slimecclResult_t groupEnd() {
  if (group.depth == 0) return fail(slimecclInvalidUsage, "slimecclGroupEnd called without a matching slimecclGroupStart");
  if (--group.depth > 0) return slimecclSuccess;
  std::vector<OpRecord> ops = std::move(group.ops);
  group.ops.clear();
  // Ops on one stream run together there; ops without a stream run here, all progressing at once.
  std::map<slimecclStream_t, std::vector<OpRecord>> byStream;
  for (const OpRecord& op : ops) byStream[op.stream].push_back(op);
  slimecclResult_t first = slimecclSuccess;
  for (auto& [stream, part] : byStream) {
    if (stream == nullptr) continue;
    slimecclResult_t rc = dispatch(stream, std::move(part));
    if (first == slimecclSuccess) first = rc;
  }
  auto local = byStream.find(nullptr);
  if (local != byStream.end()) {
    slimecclResult_t rc = dispatch(nullptr, std::move(local->second));
    if (first == slimecclSuccess) first = rc;
  }
  return first;
}

}  // namespace slimeccl
