// Recursive-doubling AllReduce (docs/algorithms.md), for small messages: over P = 2^k ranks, in
// step j every rank sends its whole partial result to rank XOR 2^j and reduces the partner's
// into it; after k steps every rank holds the full result. Other N fold into the largest power of
// two P below N first: of the first 2E ranks (E = N - P) each odd rank hands its whole input to
// the even rank below it, which reduces it, takes part in the P-rank algorithm and finally sends
// the result back.
//
// A step cannot reduce onto the vector it is sending (the partner may still be reading it), so
// each step reduces into a fresh copy in scratch and the last one into recv: scratch holds up to
// log2 N copies of the vector, which is small for the messages this algorithm is chosen for.
// In place, the input is first copied to scratch, since the last step writes recv while the
// first send may still be reading it.
#include "algorithms/catalog.h"
#include "algorithms/power_of_two_fold.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

class RecursiveDoubling {
 public:
  explicit RecursiveDoubling(const ScheduleRequest& r)
      : r_(r), input_(r.inPlace ? BufferId::Recv : BufferId::Send), fold_(r.nranks, r.rank) {}

  Schedule build() {
    if (fold_.foldsAway()) {
      // In place the result overwrites what was sent.
      addHandOver(s_, r_.rank, whole(input_), whole(BufferId::Recv));
      return s_;
    }
    BufferRange partial = whole(input_);
    int producer = -1;  // the step that wrote `partial`
    if (fold_.foldsIn()) {
      partial = freshCopy();
      producer = addStep(s_, Step{StepKind::RecvReduce, r_.rank + 1, whole(input_), partial});
    } else if (r_.inPlace) {
      partial = freshCopy();
      producer = addStep(s_, Step{StepKind::Copy, -1, whole(BufferId::Recv), partial});
    }
    const int a = fold_.activeIndex();
    for (int distance = 1; distance < fold_.active(); distance *= 2) {
      const int partner = fold_.rankOf(a ^ distance);
      addStep(s_, Step{StepKind::Send, partner, partial, {}, producer});
      const BufferRange into = distance * 2 == fold_.active() ? whole(BufferId::Recv) : freshCopy();
      producer = addStep(s_, Step{StepKind::RecvReduce, partner, partial, into, producer});
      partial = into;
    }
    if (r_.op == slimecclAvg) producer = addStep(s_, Step{StepKind::Scale, -1, {}, whole(BufferId::Recv), producer});
    if (fold_.foldsIn()) addStep(s_, Step{StepKind::Send, r_.rank + 1, whole(BufferId::Recv), {}, producer});
    return s_;
  }

 private:
  BufferRange whole(BufferId buffer) const { return wholeVector(r_, buffer); }
  BufferRange freshCopy() {
    BufferRange copy{BufferId::Scratch, s_.scratchBytes, r_.count * r_.typeBytes};
    s_.scratchBytes += copy.bytes;
    return copy;
  }

  const ScheduleRequest& r_;
  const BufferId input_;
  const PowerOfTwoFold fold_;
  Schedule s_;
};

}  // namespace

Schedule allreduceRecursiveDoubling(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return RecursiveDoubling(r).build();
}

}  // namespace slimeccl
