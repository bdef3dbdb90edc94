// Bruck AlltoAll (docs/algorithms.md), for small messages: ceil(log2 N) rounds instead of N - 1.
// Scratch position p first holds the block for rank + p. In round k every block whose position
// has bit k set moves 2^k ranks on, to rank + 2^k, keeping its position; after the last round
// position p holds the block from rank - p. The blocks of a round are packed into one message.
#include <algorithm>
#include <vector>

#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

struct Run {
  int first;
  int n;
};

// The positions below nranks with bit k set: runs of 2^k positions, 2^(k+1) apart.
std::vector<Run> positionsMovedInRound(int nranks, int distance) {
  std::vector<Run> runs;
  for (int first = distance; first < nranks; first += 2 * distance)
    runs.push_back(Run{first, std::min(distance, nranks - first)});
  return runs;
}

int blocksIn(const std::vector<Run>& runs) {
  int n = 0;
  for (const Run& run : runs) n += run.n;
  return n;
}

}  // namespace

Schedule alltoallBruck(const ScheduleRequest& r) {
  Schedule s;
  const size_t blockBytes = r.count * r.typeBytes;
  if (blockBytes == 0) return s;
  const int nranks = r.nranks, rank = r.rank;
  int packedBlocks = 0;
  for (int distance = 1; distance < nranks; distance *= 2)
    packedBlocks = std::max(packedBlocks, blocksIn(positionsMovedInRound(nranks, distance)));
  // Scratch: the N positions, then the outgoing and the incoming packed message.
  s.scratchBytes = static_cast<size_t>(nranks + 2 * packedBlocks) * blockBytes;
  auto range = [&](BufferId buffer, int firstBlock, int n) {
    return BufferRange{buffer, static_cast<size_t>(firstBlock) * blockBytes, static_cast<size_t>(n) * blockBytes};
  };
  auto positions = [&](int first, int n) { return range(BufferId::Scratch, first, n); };
  auto outgoing = [&](int first, int n) { return range(BufferId::Scratch, nranks + first, n); };
  auto incoming = [&](int first, int n) { return range(BufferId::Scratch, nranks + packedBlocks + first, n); };
  auto add = [&](const Step& step) {
    s.steps.push_back(step);
    return static_cast<int>(s.steps.size()) - 1;
  };

  // Position p = block rank + p of the Send buffer: blocks rank .. N-1, then 0 .. rank-1.
  add(Step{StepKind::Copy, -1, range(BufferId::Send, rank, nranks - rank), positions(0, nranks - rank)});
  if (rank > 0) add(Step{StepKind::Copy, -1, range(BufferId::Send, 0, rank), positions(nranks - rank, rank)});

  // Local steps run in list order, so packing a round follows unpacking the previous one; only
  // the waits on the network need naming.
  int previousSend = -1, previousUnpack = -1;
  for (int distance = 1; distance < nranks; distance *= 2) {
    const std::vector<Run> runs = positionsMovedInRound(nranks, distance);
    const int n = blocksIn(runs);
    int packed = 0, lastPack = -1;
    for (const Run& run : runs) {
      // The first copy overwrites the outgoing message of the previous round: it waits for that send.
      lastPack = add(Step{StepKind::Copy, -1, positions(run.first, run.n), outgoing(packed, run.n),
                          packed == 0 ? previousSend : -1});
      packed += run.n;
    }
    previousSend = add(Step{StepKind::Send, (rank + distance) % nranks, outgoing(0, n), {}, lastPack});
    // The receive overwrites the incoming message of the previous round: it waits for its unpacking.
    const int recv = add(Step{StepKind::Recv, (rank - distance + nranks) % nranks, {}, incoming(0, n), previousUnpack});
    packed = 0;
    for (const Run& run : runs) {
      previousUnpack =
          add(Step{StepKind::Copy, -1, incoming(packed, run.n), positions(run.first, run.n), packed == 0 ? recv : -1});
      packed += run.n;
    }
  }

  // Position p now holds the block from rank - p.
  for (int p = 0; p < nranks; ++p)
    add(Step{StepKind::Copy, -1, positions(p, 1), range(BufferId::Recv, (rank - p + nranks) % nranks, 1)});
  return s;
}

}  // namespace slimeccl
