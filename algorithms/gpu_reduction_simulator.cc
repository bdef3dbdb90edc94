#include "algorithms/gpu_reduction_simulator.h"

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

struct Access {
  int byRank;
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

}  // namespace

GpuReductionCheck simulateGpuReduction(GpuReductionRequest r, std::vector<RankBuffers>& buffers,
                                       slimecclDataType_t type, slimecclRedOp_t op) {
  GpuReductionCheck check;
  auto failWith = [&](const std::string& why) {
    check.ok = false;
    check.error = why;
    return check;
  };
  std::vector<GpuReductionPlan> plans;
  std::vector<Access> accesses;
  for (int rank = 0; rank < r.nranks; ++rank) {
    r.rank = rank;
    plans.push_back(planGpuReduction(r));
    const GpuReductionPlan& plan = plans.back();
    if (plan.count == 0) continue;
    for (const RankSpan& s : plan.sources) accesses.push_back({rank, false, place(r, s, plan.count)});
    for (const RankSpan& s : plan.destinations) accesses.push_back({rank, true, place(r, s, plan.count)});
  }
  for (const Access& a : accesses)
    if (a.where.firstByte + a.where.bytes > storage(buffers, a.where).size())
      return failWith("rank " + std::to_string(a.byRank) + " reaches past the buffer: " + describe(a.where));
  for (const Access& a : accesses)
    for (const Access& b : accesses)
      if (a.write && b.byRank != a.byRank && overlap(a.where, b.where))
        return failWith("race: rank " + std::to_string(a.byRank) + " writes " + describe(a.where) + " while rank " +
                        std::to_string(b.byRank) + (b.write ? " writes " : " reads ") + describe(b.where));
  // No span is shared between ranks, so reading every input before any write is what the kernels see.
  std::vector<std::vector<char>> results(r.nranks);
  for (int rank = 0; rank < r.nranks; ++rank) {
    const GpuReductionPlan& plan = plans[rank];
    if (plan.count == 0) continue;
    std::vector<char>& acc = results[rank];
    const Placed first = place(r, plan.sources[0], plan.count);
    acc.assign(storage(buffers, first).begin() + first.firstByte,
               storage(buffers, first).begin() + first.firstByte + first.bytes);
    for (size_t k = 1; k < plan.sources.size(); ++k) {
      const Placed src = place(r, plan.sources[k], plan.count);
      reduceArrays(acc.data(), acc.data(), storage(buffers, src).data() + src.firstByte, plan.count, type, op);
    }
    if (op == slimecclAvg) divideArray(acc.data(), plan.count, type, r.nranks);
  }
  for (int rank = 0; rank < r.nranks; ++rank)
    for (const RankSpan& s : plans[rank].destinations) {
      const Placed dst = place(r, s, plans[rank].count);
      if (dst.bytes != 0) memcpy(storage(buffers, dst).data() + dst.firstByte, results[rank].data(), dst.bytes);
    }
  if (r.inPlace)
    for (int rank = 0; rank < r.nranks; ++rank) {
      std::vector<char>& recv = buffers[rank].recv;
      const size_t from = recvViewOffset(r, rank) * r.typeBytes;
      if (!recv.empty()) memcpy(recv.data(), buffers[rank].send.data() + from, recv.size());
    }
  return check;
}

}  // namespace slimeccl
