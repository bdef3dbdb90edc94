// Halving-doubling AllGather (docs/algorithms.md): recursive doubling when the rank count is a
// power of two, Bruck's algorithm otherwise. Both take ceil(log2 N) steps and send (N - 1) blocks.
#include <algorithm>

#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

bool isPowerOfTwo(int n) { return (n & (n - 1)) == 0; }

// Step k: exchange the 2^k blocks gathered so far (the rank's aligned group of 2^k ranks) with
// rank XOR 2^k, whose group is the neighbouring one; the groups double every step.
Schedule recursiveDoubling(int nranks, int rank, size_t blockBytes, bool inPlace) {
  Schedule s;
  auto blocks = [&](int first, int n) {
    return BufferRange{BufferId::Recv, static_cast<size_t>(first) * blockBytes, static_cast<size_t>(n) * blockBytes};
  };
  const BufferRange own = inPlace ? blocks(rank, 1) : BufferRange{BufferId::Send, 0, blockBytes};
  // Each receive waits for the previous one (the first, out of place, for the own copy), so that
  // "the last receive is complete" means "every block gathered so far is in place", which the
  // next send reads.
  int gathered = -1;
  if (!inPlace) {
    s.steps.push_back(Step{StepKind::Copy, -1, own, blocks(rank, 1)});
    gathered = 0;
  }
  for (int distance = 1; distance < nranks; distance *= 2) {
    const int partner = rank ^ distance;
    const int group = rank & ~(distance - 1);
    const int partnerGroup = group ^ distance;
    s.steps.push_back(Step{
        StepKind::Send, partner, distance == 1 ? own : blocks(group, distance), {}, distance == 1 ? -1 : gathered});
    s.steps.push_back(Step{StepKind::Recv, partner, {}, blocks(partnerGroup, distance), gathered});
    gathered = static_cast<int>(s.steps.size()) - 1;
  }
  return s;
}

// Bruck: scratch position p holds block (rank + p) mod N. Step k sends positions
// [0, min(2^k, N - 2^k)) to rank - 2^k and receives the same count into positions starting at
// 2^k from rank + 2^k. A final rotation puts position p at block (rank + p) mod N of the output.
Schedule bruck(int nranks, int rank, size_t blockBytes, bool inPlace) {
  Schedule s;
  s.scratchBytes = static_cast<size_t>(nranks) * blockBytes;
  auto positions = [&](int first, int n) {
    return BufferRange{BufferId::Scratch, static_cast<size_t>(first) * blockBytes, static_cast<size_t>(n) * blockBytes};
  };
  auto blocks = [&](int first, int n) {
    return BufferRange{BufferId::Recv, static_cast<size_t>(first) * blockBytes, static_cast<size_t>(n) * blockBytes};
  };
  const BufferRange own = inPlace ? blocks(rank, 1) : BufferRange{BufferId::Send, 0, blockBytes};
  s.steps.push_back(Step{StepKind::Copy, -1, own, positions(0, 1)});
  // As in recursive doubling, receives form a chain so the last one stands for all of them.
  int gathered = 0;
  for (int distance = 1; distance < nranks; distance *= 2) {
    const int n = std::min(distance, nranks - distance);
    s.steps.push_back(Step{StepKind::Send,
                           (rank - distance + nranks) % nranks,
                           distance == 1 ? own : positions(0, n),
                           {},
                           distance == 1 ? -1 : gathered});
    s.steps.push_back(Step{StepKind::Recv, (rank + distance) % nranks, {}, positions(distance, n), gathered});
    gathered = static_cast<int>(s.steps.size()) - 1;
  }
  // Positions 0 .. N-rank-1 are blocks rank .. N-1; the rest wrap around to blocks 0 .. rank-1.
  // In place the own block is already where it belongs.
  const int firstPosition = inPlace ? 1 : 0;
  if (nranks - rank > firstPosition)
    s.steps.push_back(Step{StepKind::Copy, -1, positions(firstPosition, nranks - rank - firstPosition),
                           blocks(rank + firstPosition, nranks - rank - firstPosition), gathered});
  if (rank > 0) s.steps.push_back(Step{StepKind::Copy, -1, positions(nranks - rank, rank), blocks(0, rank), gathered});
  return s;
}

}  // namespace

Schedule allgatherHalvingDoubling(const ScheduleRequest& r) {
  const size_t blockBytes = r.count * r.typeBytes;
  if (blockBytes == 0) return Schedule{};
  if (isPowerOfTwo(r.nranks)) return recursiveDoubling(r.nranks, r.rank, blockBytes, r.inPlace);
  return bruck(r.nranks, r.rank, blockBytes, r.inPlace);
}

}  // namespace slimeccl
