// Binomial-tree Broadcast (docs/algorithms.md). With ranks numbered relative to the root, rank v
// receives from v minus its lowest set bit, then sends to v + 2^j for every 2^j below that bit,
// largest subtree first (the root: every 2^j below N). Each send forwards the receive chunk by
// chunk, so large vectors pipeline down the tree.
#include "algorithms/catalog.h"

namespace slimeccl {

Schedule broadcastTree(const ScheduleRequest& r) {
  Schedule s;
  const size_t bytes = r.count * r.typeBytes;
  if (bytes == 0) return s;
  const int n = r.nranks;
  const int v = (r.rank - r.root + n) % n;
  auto rankOf = [&](int relative) { return (relative + r.root) % n; };
  const BufferRange vector{BufferId::Recv, 0, bytes};
  BufferRange source = vector;
  int received = -1;
  // Below the root's top bit every bit is a child; below a non-root's lowest set bit likewise.
  int childBits = 1;
  while (childBits < n) childBits *= 2;
  if (v == 0) {
    // Out of place the root sends from the user's buffer and copies it into its own result.
    if (!r.inPlace) {
      source = BufferRange{BufferId::Send, 0, bytes};
      s.steps.push_back(Step{StepKind::Copy, -1, source, vector});
    }
  } else {
    childBits = v & -v;
    s.steps.push_back(Step{StepKind::Recv, rankOf(v - childBits), {}, vector});
    received = static_cast<int>(s.steps.size()) - 1;
  }
  for (int distance = childBits / 2; distance >= 1; distance /= 2)
    if (v + distance < n) s.steps.push_back(Step{StepKind::Send, rankOf(v + distance), source, {}, received});
  return s;
}

}  // namespace slimeccl
