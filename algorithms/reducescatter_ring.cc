// Ring ReduceScatter (docs/algorithms.md): in step s rank r sends its partial result for block
// (r - s - 1) to r + 1 and receives the partial result for block (r - s - 2) from r - 1, reducing
// its own input block into it. After N - 1 steps block r holds every rank's contribution. The
// partial received in step s is the one sent in step s + 1, so the executor forwards it chunk by
// chunk as soon as each chunk is reduced.
//
// Partial results alternate between two scratch slots; a slot is overwritten only after the send
// that read its previous content has left. The last step reduces straight into recv. In place,
// recv is block r of the send buffer, which only that last step reads (reducing it onto itself).
#include <algorithm>

#include "algorithms/catalog.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

Schedule ring(const ScheduleRequest& r) {
  Schedule s;
  const int n = r.nranks, next = (r.rank + 1) % n, prev = (r.rank - 1 + n) % n;
  const size_t blockBytes = r.count * r.typeBytes;
  auto inputBlock = [&](int b) {
    return BufferRange{BufferId::Send, static_cast<size_t>((b % n + n) % n) * blockBytes, blockBytes};
  };
  auto slot = [&](int k) { return BufferRange{BufferId::Scratch, static_cast<size_t>(k) * blockBytes, blockBytes}; };
  const BufferRange out{BufferId::Recv, 0, blockBytes};
  s.scratchBytes = static_cast<size_t>(std::min(n - 2, 2)) * blockBytes;

  int lastUseOfSlot[2] = {-1, -1};
  int partial = -1;  // the reduction whose result is sent next
  for (int step = 0; step < n - 1; ++step) {
    if (step == 0) {
      addStep(s, Step{StepKind::Send, next, inputBlock(r.rank - 1), {}});
    } else {
      const int readSlot = (step - 1) % 2;
      lastUseOfSlot[readSlot] = addStep(s, Step{StepKind::Send, next, slot(readSlot), {}, partial});
    }
    const bool last = step == n - 2;
    const int writeSlot = step % 2;
    partial = addStep(s, Step{StepKind::RecvReduce, prev, inputBlock(r.rank - step - 2), last ? out : slot(writeSlot),
                              last ? -1 : lastUseOfSlot[writeSlot]});
    if (!last) lastUseOfSlot[writeSlot] = partial;
  }
  if (r.op == slimecclAvg) addStep(s, Step{StepKind::Scale, -1, {}, out, partial});
  return s;
}

}  // namespace

Schedule reduceScatterRing(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return ring(r);
}

}  // namespace slimeccl
