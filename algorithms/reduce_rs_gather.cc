// ReduceScatter + gather Reduce (docs/algorithms.md), for large vectors: the vector is cut into N
// parts (uneven when N does not divide the count, empty ones when the count is below N). A ring
// ReduceScatter leaves part r complete on rank r:
//   step s: send part (r - s - 1) to r + 1, receive part (r - s - 2) from r - 1 and reduce it
//           with the own input part;
// then every rank sends its complete part straight to the root. The root receives every byte
// once and sends N - 1 parts, instead of receiving the whole vector log2 N times as in the tree.
// Empty parts take no steps.
//
// Partial results alternate between two scratch slots; a slot is overwritten only after the send
// that read its previous content has left. The root's own part is reduced straight into recv,
// where the other parts land; other ranks never touch recv. With avg each rank divides its
// complete part before sending it.
#include <algorithm>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/partition.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

class ReduceScatterGather {
 public:
  explicit ReduceScatterGather(const ScheduleRequest& r)
      : r_(r), n_(r.nranks), isRoot_(r.rank == r.root), input_(isRoot_ && r.inPlace ? BufferId::Recv : BufferId::Send),
        inputReadAt_(n_, -1) {}

  Schedule build() {
    const int reduced = reduceScatter();
    if (!isEmpty(r_.rank)) deliverOwnPart(reduced);
    if (isRoot_) gatherAtRoot();
    return s_;
  }

 private:
  int wrap(int p) const { return (p % n_ + n_) % n_; }
  BufferRange part(BufferId buffer, int p) const {
    ByteBlock block = partOf(r_.count, r_.typeBytes, n_, wrap(p));
    return BufferRange{buffer, block.offset, block.bytes};
  }
  bool isEmpty(int p) const { return part(BufferId::Send, p).bytes == 0; }
  // The scratch slot holding the partial result of part p reduced in ReduceScatter step `step`.
  BufferRange slot(int step, int p) {
    const size_t slotBytes = partOf(r_.count, r_.typeBytes, n_, 0).bytes;  // part 0 is the largest
    BufferRange range{BufferId::Scratch, static_cast<size_t>(step % 2) * slotBytes, part(BufferId::Scratch, p).bytes};
    s_.scratchBytes = std::max(s_.scratchBytes, range.offset + range.bytes);
    return range;
  }
  // Where part r ends up complete: the root's recv, or the slot of the last step.
  BufferRange ownPart() { return isRoot_ ? part(BufferId::Recv, r_.rank) : slot(n_ - 2, r_.rank); }

  // Returns the step that completes part r.
  int reduceScatter() {
    const int next = (r_.rank + 1) % n_, prev = (r_.rank - 1 + n_) % n_;
    int lastUseOfSlot[2] = {-1, -1};
    int partial = -1;  // the reduction whose result is sent next
    for (int step = 0; step < n_ - 1; ++step) {
      const int sendPart = wrap(r_.rank - step - 1), recvPart = wrap(r_.rank - step - 2);
      if (!isEmpty(sendPart)) {
        if (step == 0) {
          inputReadAt_[sendPart] = addStep(s_, Step{StepKind::Send, next, part(input_, sendPart), {}});
        } else {
          const int readSlot = (step - 1) % 2;
          lastUseOfSlot[readSlot] = addStep(s_, Step{StepKind::Send, next, slot(step - 1, sendPart), {}, partial});
        }
      }
      if (!isEmpty(recvPart)) {
        const bool intoRecv = isRoot_ && step == n_ - 2;
        const BufferRange into = intoRecv ? ownPart() : slot(step, recvPart);
        partial = addStep(s_, Step{StepKind::RecvReduce, prev, part(input_, recvPart), into,
                                   intoRecv ? -1 : lastUseOfSlot[step % 2]});
        if (!intoRecv) lastUseOfSlot[step % 2] = partial;
        inputReadAt_[recvPart] = partial;
      }
    }
    return partial;
  }

  void deliverOwnPart(int complete) {
    const BufferRange own = ownPart();
    if (r_.op == slimecclAvg) complete = addStep(s_, Step{StepKind::Scale, -1, {}, own, complete});
    if (!isRoot_) addStep(s_, Step{StepKind::Send, r_.root, own, {}, complete});
  }

  // The root receives every other rank's part into recv, each once it has read its own input
  // there (in place the two share memory).
  void gatherAtRoot() {
    for (int p = 0; p < n_; ++p)
      if (p != r_.rank && part(BufferId::Recv, p).bytes != 0)
        addStep(s_, Step{StepKind::Recv, p, {}, part(BufferId::Recv, p), inputReadAt_[p]});
  }

  const ScheduleRequest& r_;
  const int n_;
  const bool isRoot_;
  const BufferId input_;
  std::vector<int> inputReadAt_;  // per part: the last step that read this rank's input part
  Schedule s_;
};

}  // namespace

Schedule reduceReduceScatterGather(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return ReduceScatterGather(r).build();
}

}  // namespace slimeccl
