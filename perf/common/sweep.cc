#include "common/sweep.h"

#include <limits>

namespace slimeccl_perf {

std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor, size_t stepBytes) {
  std::vector<size_t> sizes;
  const bool multiplicative = stepFactor > 1;
  if (!multiplicative && stepBytes == 0) {
    if (minBytes <= maxBytes) sizes.push_back(minBytes);
    return sizes;
  }
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  for (size_t size = minBytes; size <= maxBytes;) {
    sizes.push_back(size);
    if (multiplicative) {
      if (size == 0) {
        size = 1;
        continue;
      }
      if (size > kMax / stepFactor) break;
      size *= stepFactor;
    } else {
      if (size > kMax - stepBytes) break;
      size += stepBytes;
    }
  }
  return sizes;
}

std::vector<int> rootSweep(int root, int nranks, bool usesRoot) {
  if (!usesRoot) return {-1};
  if (root != -1) return {root};
  std::vector<int> roots;
  for (int rank = 0; rank < nranks; ++rank) roots.push_back(rank);
  return roots;
}

}  // namespace slimeccl_perf
