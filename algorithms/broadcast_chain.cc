// Pipelined chain Broadcast (docs/algorithms.md): root -> root+1 -> ... -> root-1. Every rank but
// the last forwards its receive chunk by chunk as it lands, so the vector streams down the chain.
#include "algorithms/catalog.h"

namespace slimeccl {

Schedule broadcastChain(const ScheduleRequest& r) {
  Schedule s;
  const size_t bytes = r.count * r.typeBytes;
  if (bytes == 0) return s;
  const int n = r.nranks;
  const int v = (r.rank - r.root + n) % n;
  const BufferRange vector{BufferId::Recv, 0, bytes};
  BufferRange source = vector;
  int received = -1;
  if (v == 0) {
    // Out of place the root sends from the user's buffer and copies it into its own result.
    if (!r.inPlace) {
      source = BufferRange{BufferId::Send, 0, bytes};
      s.steps.push_back(Step{StepKind::Copy, -1, source, vector});
    }
  } else {
    s.steps.push_back(Step{StepKind::Recv, (r.rank - 1 + n) % n, {}, vector});
    received = 0;
  }
  if (v < n - 1) s.steps.push_back(Step{StepKind::Send, (r.rank + 1) % n, source, {}, received});
  return s;
}

}  // namespace slimeccl
