#include "algorithms/gpu_reduction.h"

#include <algorithm>
#include <cstring>

namespace slimeccl {
namespace {

constexpr size_t kWordBytes = 16;
// Up to this many bytes read from peers, one-shot (measured in docs/performance.md).
constexpr size_t kOneShotPeerBytes = size_t{512} << 10;

std::vector<RankSpan> everyRank(int nranks, bool recv, size_t offset) {
  std::vector<RankSpan> spans;
  for (int p = 0; p < nranks; ++p) spans.push_back({p, recv, offset});
  return spans;
}

}  // namespace

const char* gpuReductionAlgoName(GpuReductionAlgo algo) {
  switch (algo) {
    case GpuReductionAlgo::OneShot: return "oneshot";
    case GpuReductionAlgo::TwoShot: return "twoshot";
    case GpuReductionAlgo::Direct: return "direct";
  }
  return "?";
}

bool parseGpuReductionAlgo(const char* name, GpuReductionAlgo* out) {
  for (GpuReductionAlgo algo : {GpuReductionAlgo::OneShot, GpuReductionAlgo::TwoShot, GpuReductionAlgo::Direct})
    if (strcmp(name, gpuReductionAlgoName(algo)) == 0) {
      *out = algo;
      return true;
    }
  return false;
}

bool gpuReductionAlgoFits(Coll coll, GpuReductionAlgo algo, bool inPlace) {
  switch (coll) {
    case Coll::AllReduce: return algo == GpuReductionAlgo::TwoShot || (algo == GpuReductionAlgo::OneShot && !inPlace);
    case Coll::Reduce: return algo == GpuReductionAlgo::OneShot || algo == GpuReductionAlgo::TwoShot;
    case Coll::ReduceScatter: return algo == GpuReductionAlgo::Direct;
    default: return false;
  }
}

GpuReductionAlgo tuneGpuReduction(Coll coll, size_t bytes, int nranks, bool inPlace) {
  if (coll == Coll::ReduceScatter) return GpuReductionAlgo::Direct;
  const bool small = bytes * static_cast<size_t>(std::max(nranks - 1, 1)) <= kOneShotPeerBytes;
  return small && gpuReductionAlgoFits(coll, GpuReductionAlgo::OneShot, inPlace) ? GpuReductionAlgo::OneShot
                                                                                 : GpuReductionAlgo::TwoShot;
}

size_t twoShotChunkElements(size_t count, size_t typeBytes, int nranks) {
  const size_t perWord = std::max<size_t>(kWordBytes / typeBytes, 1);
  const size_t words = (count + perWord - 1) / perWord;
  return (words + nranks - 1) / nranks * perWord;
}

GpuReductionPlan planGpuReduction(const GpuReductionRequest& r) {
  GpuReductionPlan plan;
  switch (r.algo) {
    case GpuReductionAlgo::OneShot:
      if (r.coll == Coll::Reduce && r.rank != r.root) return plan;
      plan.sources = everyRank(r.nranks, false, 0);
      plan.destinations = {{r.rank, true, 0}};
      plan.count = r.count;
      return plan;
    case GpuReductionAlgo::TwoShot: {
      const size_t chunk = twoShotChunkElements(r.count, r.typeBytes, r.nranks);
      const size_t first = std::min(r.count, chunk * r.rank);
      plan.count = std::min(r.count, first + chunk) - first;
      plan.sources = everyRank(r.nranks, false, first);
      plan.destinations =
          r.coll == Coll::Reduce ? std::vector<RankSpan>{{r.root, true, first}} : everyRank(r.nranks, true, first);
      return plan;
    }
    case GpuReductionAlgo::Direct:
      plan.sources = everyRank(r.nranks, false, r.count * r.rank);
      plan.destinations = {{r.rank, true, 0}};
      plan.count = r.count;
      return plan;
  }
  return plan;
}

}  // namespace slimeccl
