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
Chunk chunkOf(const GpuReductionRequest& r, int c, int chunks) {
  const size_t size = twoShotChunkElements(r.count, r.typeBytes, chunks);
  const size_t first = std::min(r.count, size * static_cast<size_t>(c));
  return {first, std::min(r.count, first + size) - first};
}
Chunk chunkOf(const GpuReductionRequest& r, int c) { return chunkOf(r, c, r.nranks); }

// The chunk rank r reduces in two-shot: chunk r of N; Reduce on 3 or more ranks: the root reduces
// none and the others one of N - 1 each, so the root's links carry each result once and nothing
// else in (reducing a chunk itself, it would read N - 1 peers' chunks on top of the results).
Chunk twoShotChunk(const GpuReductionRequest& r) {
  if (r.coll != Coll::Reduce || r.nranks < 3) return chunkOf(r, r.rank);
  if (r.rank == r.root) return {0, 0};
  return chunkOf(r, (r.rank - r.root - 1 + r.nranks) % r.nranks, r.nranks - 1);
}

// Copies of this rank's chunk of its output into the same chunk of every peer's output.
std::vector<GatherCopy> gatherChunk(const GpuReductionRequest& r, Chunk chunk) {
  std::vector<GatherCopy> copies;
  if (chunk.count == 0) return copies;
  for (int k = 1; k < r.nranks; ++k)
    copies.push_back({{r.rank, true, chunk.first}, {(r.rank + k) % r.nranks, true, chunk.first}, chunk.count});
  return copies;
}

// AllReduce's ring: partial results in the reducing rank's own output, chunk r gathered by copy
// engines at the end.
GpuReductionPlan allReduceRing(const GpuReductionRequest& r) {
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
  plan.gathers = gatherChunk(r, chunkOf(r, r.rank));
  return plan;
}

// ReduceScatter's and Reduce's ring: block (chunk) c is reduced from rank c on round to rank c - 1,
// its partial results kept where the result goes (rank c's output; Reduce: the root's output
// chunk c), so no rank needs room of its own for them.
GpuReductionPlan keptAtDestinationRing(const GpuReductionRequest& r) {
  GpuReductionPlan plan;
  const int n = r.nranks;
  const int left = (r.rank + n - 1) % n;
  const bool scatter = r.coll == Coll::ReduceScatter;
  for (int k = 1; k < n; ++k) {
    const int c = ((r.rank - k) % n + n) % n;
    const Chunk chunk = scatter ? Chunk{r.count * c, r.count} : chunkOf(r, c);
    const RankSpan result = scatter ? RankSpan{c, true, 0} : RankSpan{r.root, true, chunk.first};
    GpuReductionStep step;
    step.sources = {k > 1 ? result : RankSpan{left, false, chunk.first}, {r.rank, false, chunk.first}};
    step.destinations = {result};
    step.count = chunk.count;
    plan.steps.push_back(step);
  }
  return plan;
}

GpuReductionPlan ringPlan(const GpuReductionRequest& r) {
  if (r.nranks == 1) {
    GpuReductionPlan alone;
    alone.steps.push_back({{{0, false, 0}}, {{0, true, 0}}, r.count});
    return alone;
  }
  GpuReductionPlan plan = r.coll == Coll::AllReduce ? allReduceRing(r) : keptAtDestinationRing(r);
  if (r.nranks > 2) {
    plan.waitsFor = (r.rank + r.nranks - 1) % r.nranks;
    plan.signals = (r.rank + 1) % r.nranks;
  }
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
    // Reduce's ring keeps partial results in the root's output, which in place is the root's input
    // it has yet to read.
    case Coll::Reduce:
      return algo == GpuReductionAlgo::OneShot || algo == GpuReductionAlgo::TwoShotSm ||
             (algo == GpuReductionAlgo::Ring && !inPlace);
    case Coll::ReduceScatter: return algo == GpuReductionAlgo::Direct || algo == GpuReductionAlgo::Ring;
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
      const Chunk chunk = twoShotChunk(r);
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
