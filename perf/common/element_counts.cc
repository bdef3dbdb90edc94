#include "common/element_counts.h"

#include <algorithm>

namespace slimeccl_perf {

size_t inPlaceExtent(const ElementCounts& counts, int rank) {
  const size_t r = static_cast<size_t>(rank);
  return std::max(counts.sendInPlaceOffset * r + counts.send, counts.recvInPlaceOffset * r + counts.recv);
}

size_t rowBytes(const ElementCounts& counts, size_t typeSize) { return std::max(counts.send, counts.recv) * typeSize; }

}  // namespace slimeccl_perf
