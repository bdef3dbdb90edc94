#include "algorithms/gpu_reduction_simulator.h"

#include <algorithm>
#include <cstring>

#include "algorithms/reduce.h"

namespace slimeccl {
namespace {

// A span as it lies in memory: in place, the receive buffer is a view of the send buffer.
struct Placed {
  int owner;
  bool recvStorage;
  size_t firstByte, bytes;
};

// One rank's reach into a buffer in one of its phases: its steps, then its gather copies.
struct Access {
  int byRank;
  int phase;
  bool write;
  Placed where;
};

size_t recvViewOffset(const GpuReductionRequest& r, int owner) {
  return r.coll == Coll::ReduceScatter ? r.count * owner : 0;
}

Placed place(const GpuReductionRequest& r, const RankSpan& span, size_t count) {
  const size_t b = r.typeBytes;
  if (r.inPlace && span.recv) return {span.rank, false, (recvViewOffset(r, span.rank) + span.offset) * b, count * b};
  return {span.rank, span.recv && !r.inPlace, span.offset * b, count * b};
}

std::vector<char>& storage(std::vector<RankBuffers>& buffers, const Placed& p) {
  return p.recvStorage ? buffers[p.owner].recv : buffers[p.owner].send;
}

bool overlap(const Placed& a, const Placed& b) {
  return a.owner == b.owner && a.recvStorage == b.recvStorage && a.firstByte < b.firstByte + b.bytes &&
         b.firstByte < a.firstByte + a.bytes;
}

std::string describe(const Placed& p) {
  return "rank " + std::to_string(p.owner) + (p.recvStorage ? "'s recv" : "'s send") + " bytes [" +
         std::to_string(p.firstByte) + ", " + std::to_string(p.firstByte + p.bytes) + ")";
}

// Which (rank, phase) finishes before which starts: a rank's phases in order, and a step that
// waits for rank w's step before it; closed transitively.
class Order {
 public:
  Order(const std::vector<GpuReductionPlan>& plans, int phases)
      : phases_(phases), nodes_(static_cast<int>(plans.size()) * phases), before_(nodes_ * nodes_, false) {
    for (int r = 0; r < static_cast<int>(plans.size()); ++r) {
      for (int p = 0; p + 1 < phases; ++p) before_[index(r, p) * nodes_ + index(r, p + 1)] = true;
      const int w = plans[r].waitsFor;
      if (w < 0) continue;
      const int steps = static_cast<int>(plans[r].steps.size());
      for (int k = 1; k < steps && k <= static_cast<int>(plans[w].steps.size()); ++k)
        before_[index(w, k - 1) * nodes_ + index(r, k)] = true;
    }
    for (int via = 0; via < nodes_; ++via)
      for (int a = 0; a < nodes_; ++a)
        if (before_[a * nodes_ + via])
          for (int b = 0; b < nodes_; ++b)
            if (before_[via * nodes_ + b]) before_[a * nodes_ + b] = true;
  }
  bool ordered(const Access& a, const Access& b) const {
    const int x = index(a.byRank, a.phase), y = index(b.byRank, b.phase);
    return before_[x * nodes_ + y] || before_[y * nodes_ + x];
  }

 private:
  int index(int rank, int phase) const { return rank * phases_ + phase; }
  int phases_, nodes_;
  std::vector<bool> before_;
};

}  // namespace

GpuReductionCheck simulateGpuReduction(GpuReductionRequest r, std::vector<RankBuffers>& buffers,
                                       slimecclDataType_t type, slimecclRedOp_t op) {
  std::vector<GpuReductionPlan> plans;
  for (int rank = 0; rank < r.nranks; ++rank) {
    r.rank = rank;
    plans.push_back(planGpuReduction(r));
  }
  return simulateGpuReductionPlans(r, plans, buffers, type, op);
}

GpuReductionCheck simulateGpuReductionPlans(const GpuReductionRequest& r, const std::vector<GpuReductionPlan>& plans,
                                            std::vector<RankBuffers>& buffers, slimecclDataType_t type,
                                            slimecclRedOp_t op) {
  GpuReductionCheck check;
  auto failWith = [&](const std::string& why) {
    check.ok = false;
    check.error = why;
    return check;
  };
  const int n = r.nranks;
  size_t mostSteps = 0;
  for (const GpuReductionPlan& plan : plans) mostSteps = std::max(mostSteps, plan.steps.size());
  const int gatherPhase = static_cast<int>(mostSteps);
  for (int rank = 0; rank < n; ++rank) {
    const GpuReductionPlan& plan = plans[rank];
    if (plan.steps.size() > 1 && (plan.waitsFor < 0) != (plan.signals < 0))
      return failWith("rank " + std::to_string(rank) + " waits for a neighbour but lets none go, or the reverse");
    if (plan.waitsFor >= 0 && plans[plan.waitsFor].signals != rank)
      return failWith("rank " + std::to_string(rank) + " waits for rank " + std::to_string(plan.waitsFor) +
                      ", which lets another rank go");
  }
  std::vector<Access> accesses;
  for (int rank = 0; rank < n; ++rank) {
    const GpuReductionPlan& plan = plans[rank];
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      const GpuReductionStep& step = plan.steps[k];
      if (step.count == 0) continue;
      const int phase = static_cast<int>(k);
      for (const RankSpan& s : step.sources) accesses.push_back({rank, phase, false, place(r, s, step.count)});
      for (const RankSpan& s : step.destinations) accesses.push_back({rank, phase, true, place(r, s, step.count)});
    }
    for (const GatherCopy& g : plan.gathers) {
      accesses.push_back({rank, gatherPhase, false, place(r, g.from, g.count)});
      accesses.push_back({rank, gatherPhase, true, place(r, g.to, g.count)});
    }
  }
  for (const Access& a : accesses)
    if (a.where.firstByte + a.where.bytes > storage(buffers, a.where).size())
      return failWith("rank " + std::to_string(a.byRank) + " reaches past the buffer: " + describe(a.where));
  const Order order(plans, gatherPhase + 1);
  for (const Access& a : accesses)
    for (const Access& b : accesses)
      if (a.write && b.byRank != a.byRank && overlap(a.where, b.where) && !order.ordered(a, b))
        return failWith("race: rank " + std::to_string(a.byRank) + " writes " + describe(a.where) + " while rank " +
                        std::to_string(b.byRank) + (b.write ? " writes " : " reads ") + describe(b.where));
  // Phase by phase: every rank's phase reads before any writes. Accesses that race were failed
  // above, so within a phase no rank reads what another writes, and this is what the GPUs see.
  for (int phase = 0; phase < gatherPhase; ++phase) {
    std::vector<std::vector<char>> results(n);
    for (int rank = 0; rank < n; ++rank) {
      const GpuReductionPlan& plan = plans[rank];
      if (phase >= static_cast<int>(plan.steps.size()) || plan.steps[phase].count == 0) continue;
      const GpuReductionStep& step = plan.steps[phase];
      std::vector<char>& acc = results[rank];
      const Placed first = place(r, step.sources[0], step.count);
      acc.assign(storage(buffers, first).begin() + first.firstByte,
                 storage(buffers, first).begin() + first.firstByte + first.bytes);
      for (size_t s = 1; s < step.sources.size(); ++s) {
        const Placed src = place(r, step.sources[s], step.count);
        reduceArrays(acc.data(), acc.data(), storage(buffers, src).data() + src.firstByte, step.count, type, op);
      }
      if (op == slimecclAvg && phase + 1 == static_cast<int>(plan.steps.size()))
        divideArray(acc.data(), step.count, type, n);
    }
    for (int rank = 0; rank < n; ++rank) {
      if (results[rank].empty()) continue;
      for (const RankSpan& s : plans[rank].steps[phase].destinations) {
        const Placed dst = place(r, s, plans[rank].steps[phase].count);
        memcpy(storage(buffers, dst).data() + dst.firstByte, results[rank].data(), dst.bytes);
      }
    }
  }
  for (int rank = 0; rank < n; ++rank)
    for (const GatherCopy& g : plans[rank].gathers) {
      const Placed from = place(r, g.from, g.count), to = place(r, g.to, g.count);
      memcpy(storage(buffers, to).data() + to.firstByte, storage(buffers, from).data() + from.firstByte, to.bytes);
    }
  if (r.inPlace)
    for (int rank = 0; rank < n; ++rank) {
      std::vector<char>& recv = buffers[rank].recv;
      const size_t from = recvViewOffset(r, rank) * r.typeBytes;
      if (!recv.empty()) memcpy(recv.data(), buffers[rank].send.data() + from, recv.size());
    }
  return check;
}

}  // namespace slimeccl
