// Direct AllGather (docs/algorithms.md): every rank sends its block to every other rank. In step
// i a rank sends to rank + i and receives from rank - i, so each step is a permutation and no
// rank receives from two senders at once.
#include "algorithms/catalog.h"

namespace slimeccl {

Schedule allgatherDirect(const ScheduleRequest& r) {
  Schedule s;
  const size_t blockBytes = r.count * r.typeBytes;
  if (blockBytes == 0) return s;
  const int n = r.nranks;
  auto block = [&](int b) { return BufferRange{BufferId::Recv, static_cast<size_t>(b) * blockBytes, blockBytes}; };
  // Sends read the user's block where it is; nothing writes it, so no step waits for another.
  const BufferRange own = r.inPlace ? block(r.rank) : BufferRange{BufferId::Send, 0, blockBytes};
  if (!r.inPlace) s.steps.push_back(Step{StepKind::Copy, -1, own, block(r.rank)});
  for (int i = 1; i < n; ++i) {
    const int to = (r.rank + i) % n, from = (r.rank - i + n) % n;
    s.steps.push_back(Step{StepKind::Send, to, own, {}});
    s.steps.push_back(Step{StepKind::Recv, from, {}, block(from)});
  }
  return s;
}

}  // namespace slimeccl
