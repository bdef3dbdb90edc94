// What one run sweeps over: message sizes and, for rooted collectives, roots.
#pragma once

#include <cstddef>
#include <vector>

namespace slimeccl_perf {

// Sizes from minBytes up to maxBytes inclusive, multiplying by stepFactor when it is above 1 and
// adding stepBytes otherwise, as nccl-tests does. A zero minBytes with a factor is followed by 1 so
// the sweep still grows; the sweep stops before a step would overflow.
std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor, size_t stepBytes);

// Roots to run: {-1} for collectives without a root, every rank when root is -1 (as nccl-tests'
// broadcast does), otherwise just root.
std::vector<int> rootSweep(int root, int nranks, bool usesRoot);

}  // namespace slimeccl_perf
