#include "collective_sweep.h"

#include <algorithm>
#include <span>

#include "buffers.h"
#include "reduction_expectations.h"

namespace slimeccl_test {

namespace {

struct Placement {
  bool inPlace;
  bool unusedBuffersNull;
};

constexpr Placement kPlacements[] = {{false, false}, {true, false}};
constexpr Placement kRootedPlacements[] = {{false, false}, {false, true}, {true, false}};

// Not a multiple of nranks, so splits of the vector between ranks are uneven.
size_t unevenCount(int nranks) { return 19 * static_cast<size_t>(nranks) - 1; }

std::vector<size_t> sweepCounts(int nranks) {
  // nranks-1 leaves some ranks without elements wherever a vector is split between ranks.
  std::vector<size_t> counts = {0, 1, 13, unevenCount(nranks)};
  if (nranks > 2) counts.push_back(static_cast<size_t>(nranks) - 1);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::vector<int> sweepRoots(int nranks) {
  std::vector<int> roots = {0, nranks / 2, nranks - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

}  // namespace

std::vector<CallShape> sweepCalls(Collective collective, int nranks) {
  const std::vector<size_t> counts = sweepCounts(nranks);
  const std::vector<int> roots = sweepRoots(nranks);
  const std::span<const Placement> placements =
      isRooted(collective) ? std::span<const Placement>(kRootedPlacements) : std::span<const Placement>(kPlacements);
  std::vector<CallShape> calls;
  auto add = [&](slimecclDataType_t datatype, slimecclRedOp_t op, size_t count, int root, const Placement& placement) {
    calls.push_back({datatype, op, count, root, placement.inPlace, placement.unusedBuffersNull, calls.size() + 1});
  };
  // Where a loop does not fix the root, the placement or the op, it rotates with the loop
  // indices, so each pairs with every datatype, count and placement without a full product
  // (root and placement at different rates, so that every pair of them occurs too).
  for (size_t d = 0; d < std::size(kAllDatatypes); ++d) {
    const slimecclDataType_t datatype = kAllDatatypes[d];
    if (isReduction(collective)) {
      for (size_t o = 0; o < std::size(kAllOps); ++o)
        add(datatype, kAllOps[o], unevenCount(nranks), roots[(d + 2 * o) % roots.size()],
            placements[(d + o) % placements.size()]);
    }
    for (size_t c = 0; c < counts.size(); ++c) {
      if (isReduction(collective) && counts[c] == unevenCount(nranks)) continue;
      for (size_t p = 0; p < placements.size(); ++p)
        add(datatype, kAllOps[(d + c + p) % std::size(kAllOps)], counts[c], roots[(d + c + p) % roots.size()],
            placements[p]);
    }
  }
  return calls;
}

std::vector<CallShape> largeCalls(Collective collective, int nranks) {
  const bool perRankBlocks = collective == Collective::kAllGather || collective == Collective::kReduceScatter ||
                             collective == Collective::kAlltoAll;
  const size_t divisor = perRankBlocks ? static_cast<size_t>(nranks) : 1;
  const slimecclRedOp_t op = isReduction(collective) ? slimecclAvg : slimecclSum;
  return {
      {slimecclInt8, slimecclSum, (size_t{1} << 20) / divisor + 7, nranks - 1, false, false, 1},
      {slimecclFloat32, op, (size_t{1} << 18) / divisor + 3, nranks / 2, true, false, 2},
  };
}

void runCalls(Collective collective, slimecclComm_t comm, const std::vector<CallShape>& calls) {
  for (const CallShape& call : calls) checkCall(collective, comm, call);
}

}  // namespace slimeccl_test
