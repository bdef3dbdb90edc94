#include "algorithms/gpu_reduction.h"

#include <algorithm>
#include <cstring>

namespace slimeccl {
namespace {

constexpr size_t kWordBytes = 16;

std::vector<RankSpan> everyRank(int nranks, bool recv, size_t offset) {
  std::vector<RankSpan> spans;
  for (int p = 0; p < nranks; ++p) spans.push_back({p, recv, offset});
  return spans;
}

// Chunk c of the vector, as two-shot and ring cut it: its first element and its length.
struct Chunk {
  size_t first, count;
};
Chunk chunkOf(const GpuReductionRequest& r, int c) {
  const size_t size = twoShotChunkElements(r.count, r.typeBytes, r.nranks);
  const size_t first = std::min(r.count, size * static_cast<size_t>(c));
  return {first, std::min(r.count, first + size) - first};
}

// Copies of this rank's chunk of its output into the same chunk of every peer's output.
std::vector<GatherCopy> gatherChunk(const GpuReductionRequest& r, Chunk chunk) {
  std::vector<GatherCopy> copies;
  if (chunk.count == 0) return copies;
  for (int k = 1; k < r.nranks; ++k)
    copies.push_back({{r.rank, true, chunk.first}, {(r.rank + k) % r.nranks, true, chunk.first}, chunk.count});
  return copies;
}

GpuReductionPlan ringPlan(const GpuReductionRequest& r) {
  GpuReductionPlan plan;
  const int n = r.nranks;
  const int left = (r.rank + n - 1) % n;
  for (int k = 1; k < n; ++k) {
    const Chunk chunk = chunkOf(r, ((r.rank - k - 1) % n + n) % n);
    GpuReductionStep step;
    step.sources = {{left, k > 1, chunk.first}, {r.rank, false, chunk.first}};
    step.destinations = {{r.rank, true, chunk.first}};
    step.count = chunk.count;
    plan.steps.push_back(step);
  }
  if (n > 2) {
    plan.waitsFor = left;
    plan.signals = (r.rank + 1) % n;
  }
  if (n == 1) plan.steps.push_back({{{0, false, 0}}, {{0, true, 0}}, r.count});
  plan.gathers = gatherChunk(r, chunkOf(r, r.rank));
  return plan;
}

}  // namespace

const char* gpuReductionAlgoName(GpuReductionAlgo algo) {
  switch (algo) {
    case GpuReductionAlgo::OneShot: return "oneshot";
    case GpuReductionAlgo::TwoShot: return "twoshot";
    case GpuReductionAlgo::TwoShotSm: return "twoshot_sm";
    case GpuReductionAlgo::Ring: return "ring";
    case GpuReductionAlgo::Direct: return "direct";
  }
  return "?";
}

bool parseGpuReductionAlgo(const char* name, GpuReductionAlgo* out) {
  for (GpuReductionAlgo algo : kGpuReductionAlgos)
    if (strcmp(name, gpuReductionAlgoName(algo)) == 0) {
      *out = algo;
      return true;
    }
  return false;
}

bool gpuReductionAlgoFits(Coll coll, GpuReductionAlgo algo, bool inPlace) {
  switch (coll) {
    case Coll::AllReduce:
      return algo == GpuReductionAlgo::TwoShot || algo == GpuReductionAlgo::TwoShotSm ||
             algo == GpuReductionAlgo::Ring || (algo == GpuReductionAlgo::OneShot && !inPlace);
    case Coll::Reduce: return algo == GpuReductionAlgo::OneShot || algo == GpuReductionAlgo::TwoShotSm;
    case Coll::ReduceScatter: return algo == GpuReductionAlgo::Direct;
    default: return false;
  }
}

size_t twoShotChunkElements(size_t count, size_t typeBytes, int nranks) {
  const size_t perWord = std::max<size_t>(kWordBytes / typeBytes, 1);
  const size_t words = (count + perWord - 1) / perWord;
  return (words + nranks - 1) / nranks * perWord;
}

GpuReductionPlan planGpuReduction(const GpuReductionRequest& r) {
  GpuReductionPlan plan;
  GpuReductionStep step;
  switch (r.algo) {
    case GpuReductionAlgo::OneShot:
      if (r.coll == Coll::Reduce && r.rank != r.root) return plan;
      step.sources = everyRank(r.nranks, false, 0);
      step.destinations = {{r.rank, true, 0}};
      step.count = r.count;
      break;
    case GpuReductionAlgo::TwoShot:
    case GpuReductionAlgo::TwoShotSm: {
      const Chunk chunk = chunkOf(r, r.rank);
      step.count = chunk.count;
      step.sources = everyRank(r.nranks, false, chunk.first);
      if (r.algo == GpuReductionAlgo::TwoShot) {
        step.destinations = {{r.rank, true, chunk.first}};
        plan.gathers = gatherChunk(r, chunk);
      } else {
        step.destinations = r.coll == Coll::Reduce ? std::vector<RankSpan>{{r.root, true, chunk.first}}
                                                   : everyRank(r.nranks, true, chunk.first);
      }
      break;
    }
    case GpuReductionAlgo::Ring: return ringPlan(r);
    case GpuReductionAlgo::Direct:
      step.sources = everyRank(r.nranks, false, r.count * r.rank);
      step.destinations = {{r.rank, true, 0}};
      step.count = r.count;
      break;
  }
  plan.steps.push_back(step);
  return plan;
}

}  // namespace slimeccl
