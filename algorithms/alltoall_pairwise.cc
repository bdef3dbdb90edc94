// Pairwise AlltoAll (docs/algorithms.md): in step i = 1 .. N-1 a rank sends its block for rank + i
// and receives the block from rank - i; its own block is a local copy. Each step is a
// permutation, so every rank sends and receives one block at a time.
#include "algorithms/catalog.h"

namespace slimeccl {

Schedule alltoallPairwise(const ScheduleRequest& r) {
  Schedule s;
  const size_t blockBytes = r.count * r.typeBytes;
  if (blockBytes == 0) return s;
  const int n = r.nranks;
  auto block = [&](BufferId buffer, int b) {
    return BufferRange{buffer, static_cast<size_t>(b) * blockBytes, blockBytes};
  };
  // Sends read the Send buffer and receives write the Recv buffer (no in-place form): no step
  // touches data another step writes, so none waits for another.
  s.steps.push_back(Step{StepKind::Copy, -1, block(BufferId::Send, r.rank), block(BufferId::Recv, r.rank)});
  for (int i = 1; i < n; ++i) {
    const int to = (r.rank + i) % n, from = (r.rank - i + n) % n;
    s.steps.push_back(Step{StepKind::Send, to, block(BufferId::Send, to), {}});
    s.steps.push_back(Step{StepKind::Recv, from, {}, block(BufferId::Recv, from)});
  }
  return s;
}

}  // namespace slimeccl
