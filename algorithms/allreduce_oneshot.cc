// One-shot AllReduce (docs/algorithms.md), for tiny vectors on one host: every rank sends its
// whole input to every other rank at once, then reduces the N inputs itself in rank order
// (((x0 op x1) op x2) ...), so every rank computes bit-identical results in a single step.
// Inputs gather in scratch, the rank's own first: in place, the result overwrites the input, and
// the sends read the scratch copy instead. Chosen where the shared slots of one host carry it
// (src/exec/mailbox.h): each rank then writes its input once and copies the others' from their
// slots, with no net messages.
#include "algorithms/catalog.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {

Schedule allreduceOneShot(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  Schedule s;
  const int n = r.nranks;
  const size_t bytes = r.count * r.typeBytes;
  auto input = [&](int p) { return BufferRange{BufferId::Scratch, static_cast<size_t>(p) * bytes, bytes}; };
  s.scratchBytes = static_cast<size_t>(n) * bytes;
  const BufferRange out = wholeVector(r, BufferId::Recv);
  // arrived[p]: the step after which rank p's input is in scratch.
  std::vector<int> arrived(n);
  arrived[r.rank] =
      addStep(s, Step{StepKind::Copy, -1, wholeVector(r, r.inPlace ? BufferId::Recv : BufferId::Send), input(r.rank)});
  for (int i = 1; i < n; ++i) {
    const int to = (r.rank + i) % n, from = (r.rank - i + n) % n;
    addStep(s, Step{StepKind::Send, to, input(r.rank), {}, arrived[r.rank]});
    arrived[from] = addStep(s, Step{StepKind::Recv, from, {}, input(from)});
  }
  int result = addStep(s, Step{StepKind::Copy, -1, input(0), out, arrived[0]});
  for (int p = 1; p < n; ++p) result = addStep(s, Step{StepKind::Reduce, -1, input(p), out, arrived[p]});
  if (r.op == slimecclAvg) addStep(s, Step{StepKind::Scale, -1, {}, out, result});
  return s;
}

}  // namespace slimeccl
