// Binomial-tree Reduce (docs/algorithms.md). Ranks are numbered relative to the root
// (v = (r - root) mod N). Rank v receives from its children v + 1, v + 2, v + 4, ... (below the
// lowest set bit of v, and below N), reducing each into its partial result, then sends that to
// its parent v - lowest set bit. The root (v = 0) ends with every rank's contribution after
// ceil(log2 N) rounds. Each reduction streams into the next one and into the send to the parent
// chunk by chunk, so a large vector flows up the tree without waiting at every level.
//
// Only the root touches recv (the others may have none): its partial results build up there,
// while the others use scratch. A leaf sends its input as it is.
#include "algorithms/catalog.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
Schedule reduceTree(const ScheduleRequest& r) {
  Schedule s;
  const size_t bytes = r.count * r.typeBytes;
  if (bytes == 0) return s;
  const int n = r.nranks;
  const int v = (r.rank - r.root + n) % n;
  auto realRank = [&](int relative) { return (relative + r.root) % n; };
  const bool isRoot = v == 0;
  const BufferRange accumulator =
      isRoot ? BufferRange{BufferId::Recv, 0, bytes} : BufferRange{BufferId::Scratch, 0, bytes};

  BufferRange partial{isRoot && r.inPlace ? BufferId::Recv : BufferId::Send, 0, bytes};
  int producer = -1;  // the step that wrote `partial`
  int distance = 1;
  for (; distance < n && (v & distance) == 0; distance *= 2) {
    if (v + distance >= n) continue;
    producer = addStep(s, Step{StepKind::RecvReduce, realRank(v + distance), partial, accumulator, producer});
    partial = accumulator;
  }
  if (!isRoot) {
    if (partial.buffer == BufferId::Scratch) s.scratchBytes = bytes;
    addStep(s, Step{StepKind::Send, realRank(v - distance), partial, {}, producer});
    return s;
  }
  // A root without children (one rank) out of place: the input is the result.
  if (partial.buffer == BufferId::Send) producer = addStep(s, Step{StepKind::Copy, -1, partial, accumulator});
  if (r.op == slimecclAvg) addStep(s, Step{StepKind::Scale, -1, {}, accumulator, producer});
  return s;
}

}  // namespace slimeccl
