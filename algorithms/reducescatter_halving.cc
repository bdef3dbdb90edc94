// Recursive-halving ReduceScatter (docs/algorithms.md). With N a power of two, in each of the
// log2 N steps a rank splits the blocks it is still responsible for in two halves, sends the half
// holding its partner's block to its partner (rank XOR distance, distance N/2, N/4, ..., 1) and
// reduces the half it keeps with the one the partner sends; at the end it keeps only its own block.
//
// Other N fold into the largest power of two P below N first: of the first 2E ranks (E = N - P)
// each odd rank hands its whole input to the even rank below it, which reduces it and stands for
// both ranks (and both blocks) while the P remaining ranks halve; the odd rank then receives its
// block back.
//
// Partial results live in scratch at the blocks' input offsets. In place, recv is block r of the
// send buffer: it is written only by the last step, after every read of that block.
#include <algorithm>

#include "algorithms/catalog.h"
#include "algorithms/power_of_two_fold.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

class RecursiveHalving {
 public:
  explicit RecursiveHalving(const ScheduleRequest& r)
      : r_(r), blockBytes_(r.count * r.typeBytes), fold_(r.nranks, r.rank) {}

  Schedule build() {
    if (fold_.foldsAway()) {
      // Its block comes back reduced (and averaged); in place it overwrites part of what was sent.
      addHandOver(s_, r_.rank, blocks(BufferId::Send, 0, r_.nranks), out());
    } else {
      halve();
    }
    return s_;
  }

 private:
  // Active rank a stands for ranks (and blocks) firstOf(a) .. firstOf(a + 1) - 1.
  int firstOf(int a) const { return fold_.rankOf(a); }

  BufferRange blocks(BufferId buffer, int first, int count) const {
    return BufferRange{buffer, static_cast<size_t>(first) * blockBytes_, static_cast<size_t>(count) * blockBytes_};
  }
  // The blocks of active ranks lo .. hi - 1.
  BufferRange activeBlocks(BufferId buffer, int lo, int hi) {
    BufferRange range = blocks(buffer, firstOf(lo), firstOf(hi) - firstOf(lo));
    if (buffer == BufferId::Scratch) s_.scratchBytes = std::max(s_.scratchBytes, range.offset + range.bytes);
    return range;
  }
  BufferRange out() const { return BufferRange{BufferId::Recv, 0, blockBytes_}; }

  void halve() {
    const int a = fold_.activeIndex();
    BufferId input = BufferId::Send;
    int partial = -1;  // the step that produced the partial results read next
    if (fold_.foldsIn()) {
      const BufferRange all = blocks(BufferId::Scratch, 0, r_.nranks);
      s_.scratchBytes = all.bytes;
      partial = addStep(s_, Step{StepKind::RecvReduce, r_.rank + 1, blocks(BufferId::Send, 0, r_.nranks), all});
      input = BufferId::Scratch;
    }
    int lo = 0;  // the active ranks whose blocks this rank still reduces: lo .. lo + 2 * distance - 1
    for (int distance = fold_.active() / 2; distance >= 1; distance /= 2) {
      const int partner = firstOf(a ^ distance);
      const int keep = (a & distance) ? lo + distance : lo;
      const int give = (a & distance) ? lo : lo + distance;
      addStep(s_, Step{StepKind::Send, partner, activeBlocks(input, give, give + distance), {}, partial});
      const bool ownBlockOnly = distance == 1 && !fold_.foldsIn();
      const BufferRange into = ownBlockOnly ? out() : activeBlocks(BufferId::Scratch, keep, keep + distance);
      partial =
          addStep(s_, Step{StepKind::RecvReduce, partner, activeBlocks(input, keep, keep + distance), into, partial});
      input = BufferId::Scratch;
      lo = keep;
    }
    if (fold_.foldsIn()) {
      returnFoldedBlock(partial);
    } else if (r_.op == slimecclAvg) {
      addStep(s_, Step{StepKind::Scale, -1, {}, out(), partial});
    }
  }

  // This rank now holds its own block and its odd neighbour's, both complete.
  void returnFoldedBlock(int reduced) {
    const BufferRange pair = blocks(BufferId::Scratch, r_.rank, 2);
    if (r_.op == slimecclAvg) reduced = addStep(s_, Step{StepKind::Scale, -1, {}, pair, reduced});
    addStep(s_, Step{StepKind::Send, r_.rank + 1, blocks(BufferId::Scratch, r_.rank + 1, 1), {}, reduced});
    addStep(s_, Step{StepKind::Copy, -1, blocks(BufferId::Scratch, r_.rank, 1), out(), reduced});
  }

  const ScheduleRequest& r_;
  const size_t blockBytes_;
  const PowerOfTwoFold fold_;
  Schedule s_;
};

}  // namespace

Schedule reduceScatterHalving(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return RecursiveHalving(r).build();
}

}  // namespace slimeccl
