#include "algorithms/allgather_ring.h"

#include "algorithms/catalog.h"

namespace slimeccl {

Schedule allgatherRing(int nranks, int rank, size_t blockBytes, bool inPlace) {
  Schedule s;
  const int next = (rank + 1) % nranks, prev = (rank - 1 + nranks) % nranks;
  auto block = [&](int b) { return BufferRange{BufferId::Recv, static_cast<size_t>(b) * blockBytes, blockBytes}; };
  const BufferRange own = inPlace ? block(rank) : BufferRange{BufferId::Send, 0, blockBytes};
  if (!inPlace) s.steps.push_back(Step{StepKind::Copy, -1, own, block(rank)});
  int previousRecv = -1;
  for (int step = 0; step < nranks - 1; ++step) {
    int sendBlock = (rank - step + nranks) % nranks;
    int recvBlock = (rank - step - 1 + nranks) % nranks;
    // The first send reads the rank's own block from where the user put it, not from the copy.
    Step send{StepKind::Send, next, step == 0 ? own : block(sendBlock), {}, previousRecv};
    s.steps.push_back(send);
    s.steps.push_back(Step{StepKind::Recv, prev, {}, block(recvBlock)});
    previousRecv = static_cast<int>(s.steps.size()) - 1;
  }
  return s;
}

Schedule allgatherRing(const ScheduleRequest& r) {
  return allgatherRing(r.nranks, r.rank, r.count * r.typeBytes, r.inPlace);
}

}  // namespace slimeccl
