#include "collective_sweep.h"

#include <algorithm>
#include <span>

#include "buffers.h"
#include "reduction_expectations.h"

namespace slimeccl_test {

namespace {

struct Placement {
  bool in_place;
  bool unused_buffers_null;
};

constexpr Placement kPlacements[] = {{false, false}, {true, false}};
constexpr Placement kRootedPlacements[] = {{false, false}, {false, true}, {true, false}};

// Not a multiple of nranks, so splits of the vector between ranks are uneven.
size_t uneven_count(int nranks) { return 19 * static_cast<size_t>(nranks) - 1; }

std::vector<size_t> sweep_counts(int nranks) {
  // nranks-1 leaves some ranks without elements wherever a vector is split between ranks.
  std::vector<size_t> counts = {0, 1, 13, uneven_count(nranks)};
  if (nranks > 2) counts.push_back(static_cast<size_t>(nranks) - 1);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::vector<int> sweep_roots(int nranks) {
  std::vector<int> roots = {0, nranks / 2, nranks - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

}  // namespace

std::vector<CallShape> sweep_calls(Collective collective, int nranks) {
  const std::vector<size_t> counts = sweep_counts(nranks);
  const std::vector<int> roots = sweep_roots(nranks);
  const std::span<const Placement> placements =
      is_rooted(collective) ? std::span<const Placement>(kRootedPlacements) : std::span<const Placement>(kPlacements);
  std::vector<CallShape> calls;
  auto add = [&](slimecclDataType_t datatype, slimecclRedOp_t op, size_t count, int root, const Placement& placement) {
    calls.push_back({datatype, op, count, root, placement.in_place, placement.unused_buffers_null, calls.size() + 1});
  };
  // Where a loop does not fix the root, the placement or the op, it rotates with the loop
  // indices, so each pairs with every datatype, count and placement without a full product
  // (root and placement at different rates, so that every pair of them occurs too).
  for (size_t d = 0; d < std::size(kAllDatatypes); ++d) {
    const slimecclDataType_t datatype = kAllDatatypes[d];
    if (is_reduction(collective)) {
      for (size_t o = 0; o < std::size(kAllOps); ++o)
        add(datatype, kAllOps[o], uneven_count(nranks), roots[(d + 2 * o) % roots.size()],
            placements[(d + o) % placements.size()]);
    }
    for (size_t c = 0; c < counts.size(); ++c) {
      if (is_reduction(collective) && counts[c] == uneven_count(nranks)) continue;
      for (size_t p = 0; p < placements.size(); ++p)
        add(datatype, kAllOps[(d + c + p) % std::size(kAllOps)], counts[c], roots[(d + c + p) % roots.size()],
            placements[p]);
    }
  }
  return calls;
}

std::vector<CallShape> large_calls(Collective collective, int nranks) {
  const bool per_rank_blocks = collective == Collective::kAllGather || collective == Collective::kReduceScatter ||
                               collective == Collective::kAlltoAll;
  const size_t divisor = per_rank_blocks ? static_cast<size_t>(nranks) : 1;
  const slimecclRedOp_t op = is_reduction(collective) ? slimecclAvg : slimecclSum;
  return {
      {slimecclInt8, slimecclSum, (size_t{1} << 20) / divisor + 7, nranks - 1, false, false, 1},
      {slimecclFloat32, op, (size_t{1} << 18) / divisor + 3, nranks / 2, true, false, 2},
  };
}

void run_calls(Collective collective, slimecclComm_t comm, const std::vector<CallShape>& calls) {
  for (const CallShape& call : calls) check_call(collective, comm, call);
}

}  // namespace slimeccl_test
