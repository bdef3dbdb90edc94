#include "src/exec/block_consumer.h"

#include <algorithm>

namespace slimeccl {

slimecclResult_t BlockConsumer::hand(int srcRank, const void* block, void* cudaStream) {
  handed_[static_cast<size_t>(srcRank)] = true;
  return consume(srcRank, block, cudaStream);
}

slimecclResult_t BlockConsumer::handRest(const char* recv, const void* ownBlock, size_t blockBytes, void* cudaStream) {
  const int n = static_cast<int>(handed_.size());
  for (int k = 0; k < n; ++k) {
    const int from = (rank_ - k + n) % n;
    if (handed_[static_cast<size_t>(from)]) continue;
    const void* block = from == rank_ ? ownBlock : recv + static_cast<size_t>(from) * blockBytes;
    const slimecclResult_t rc = hand(from, block, cudaStream);
    if (rc != slimecclSuccess) return rc;
  }
  return slimecclSuccess;
}

size_t BlockConsumer::handedCount() const {
  return static_cast<size_t>(std::count(handed_.begin(), handed_.end(), true));
}

}  // namespace slimeccl
