// Rabenseifner AllReduce (docs/algorithms.md): a recursive-halving ReduceScatter followed by a
// recursive-doubling AllGather, over P = 2^k ranks and P parts of the vector.
//   Halving, distance P/2, P/4, ..., 1: split the parts this rank still reduces in two halves, send
//     the half holding the partner's part to the partner (rank XOR distance) and reduce the other
//     half with what the partner sends. At the end the rank holds its own part complete.
//   Doubling, distance 1, 2, ..., P/2: send the parts held so far to the partner and receive the
//     partner's, which are the ones this rank gave away at the same distance while halving.
// Other N fold into the largest power of two P below N first: of the first 2E ranks (E = N - P)
// each odd rank hands its whole input to the even rank below it, which reduces it, takes part in
// the P-rank algorithm and finally sends the whole result back.
//
// Partial results live in scratch at their vector offsets; the last halving step reduces the own
// part into recv, where the doubling gathers the others. With avg each rank divides its complete
// part before the doubling hands it out.
#include <algorithm>

#include "algorithms/catalog.h"
#include "algorithms/partition.h"
#include "algorithms/power_of_two_fold.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

class Rabenseifner {
 public:
  explicit Rabenseifner(const ScheduleRequest& r)
      : r_(r), input_(r.inPlace ? BufferId::Recv : BufferId::Send), fold_(r.nranks, r.rank) {}

  Schedule build() {
    if (fold_.foldsAway()) {
      // In place the result overwrites what was sent.
      addHandOver(s_, r_.rank, whole(input_), whole(BufferId::Recv));
    } else {
      int complete = reduceScatterByHalving();
      if (r_.op == slimecclAvg && parts(BufferId::Recv, fold_.activeIndex(), 1).bytes != 0)
        complete = addStep(s_, Step{StepKind::Scale, -1, {}, parts(BufferId::Recv, fold_.activeIndex(), 1), complete});
      const int gathered = allGatherByDoubling(complete);
      if (fold_.foldsIn()) addStep(s_, Step{StepKind::Send, r_.rank + 1, whole(BufferId::Recv), {}, gathered});
    }
    return s_;
  }

 private:
  BufferRange whole(BufferId buffer) const { return wholeVector(r_, buffer); }
  // Parts first .. first + n - 1 of the P parts.
  BufferRange parts(BufferId buffer, int first, int n) {
    ByteBlock block = partsOf(r_.count, r_.typeBytes, fold_.active(), first, n);
    if (buffer == BufferId::Scratch) s_.scratchBytes = std::max(s_.scratchBytes, block.offset + block.bytes);
    return BufferRange{buffer, block.offset, block.bytes};
  }

  // Returns the step that completes the own part in recv.
  int reduceScatterByHalving() {
    const int a = fold_.activeIndex();
    halvingInput_ = input_;
    int partial = -1;  // the step that produced the partial results read next
    if (fold_.foldsIn()) {
      partial = addStep(s_, Step{StepKind::RecvReduce, r_.rank + 1, whole(input_), whole(BufferId::Scratch)});
      s_.scratchBytes = whole(BufferId::Scratch).bytes;
      halvingInput_ = BufferId::Scratch;
    }
    BufferId from = halvingInput_;
    int lo = 0;  // this rank still reduces parts lo .. lo + 2 * distance - 1
    for (int distance = fold_.active() / 2; distance >= 1; distance /= 2) {
      const int partner = fold_.rankOf(a ^ distance);
      const int keep = (a & distance) ? lo + distance : lo;
      const int give = (a & distance) ? lo : lo + distance;
      const int sent = addTransfer(s_, Step{StepKind::Send, partner, parts(from, give, distance), {}, partial});
      if (distance == fold_.active() / 2) firstSend_ = sent;
      const BufferRange into = distance == 1 ? parts(BufferId::Recv, a, 1) : parts(BufferId::Scratch, keep, distance);
      const int reduced =
          addTransfer(s_, Step{StepKind::RecvReduce, partner, parts(from, keep, distance), into, partial});
      if (reduced >= 0) partial = reduced;
      from = BufferId::Scratch;
      lo = keep;
    }
    return partial;
  }

  // Each receive waits for the previous one (the first for the own part), so the last receive
  // stands for all the parts gathered so far: the next send reads them all. Returns that step.
  int allGatherByDoubling(int ownPart) {
    const int a = fold_.activeIndex();
    int gathered = ownPart;
    for (int distance = 1; distance < fold_.active(); distance *= 2) {
      const int partner = fold_.rankOf(a ^ distance);
      const int held = a & ~(distance - 1);
      addTransfer(s_, Step{StepKind::Send, partner, parts(BufferId::Recv, held, distance), {}, gathered});
      // The last receive lands on the half the first halving send gave away; when that send read
      // recv (in place), the receive must wait until it has left. No later send reads that half.
      const bool last = distance * 2 == fold_.active();
      const int after = last && halvingInput_ == BufferId::Recv ? firstSend_ : gathered;
      const int received =
          addTransfer(s_, Step{StepKind::Recv, partner, {}, parts(BufferId::Recv, held ^ distance, distance), after});
      if (received >= 0) gathered = received;
    }
    return gathered;
  }

  const ScheduleRequest& r_;
  const BufferId input_;
  BufferId halvingInput_ = BufferId::Send;  // where the first halving step reads the input
  int firstSend_ = -1;                      // the first halving send
  const PowerOfTwoFold fold_;
  Schedule s_;
};

}  // namespace

Schedule allreduceRabenseifner(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return Rabenseifner(r).build();
}

}  // namespace slimeccl
