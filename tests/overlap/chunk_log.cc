#include "chunk_log.h"

#include <algorithm>
#include <cstring>

#include "rank_check.h"

namespace slimeccl_test {

std::vector<unsigned char> blockPattern(int rank, size_t bytes, uint64_t seed) {
  std::vector<unsigned char> block(bytes);
  for (size_t i = 0; i < bytes; ++i)
    block[i] = static_cast<unsigned char>((rank + 1) * 131 + i * 7 + seed * 29 + (i >> 8));
  return block;
}

void ChunkLog::onChunk(int srcRank, void* chunk, size_t count, void* user) {
  static_cast<ChunkLog*>(user)->record(srcRank, chunk, count);
}

void ChunkLog::record(int srcRank, void* chunk, size_t count) {
  const bool alone = running_.fetch_add(1) == 0;
  std::string problem;
  if (!alone) problem = concat("the callback for rank ", srcRank, " ran while another callback was running");
  if (count != count_) problem = concat("rank ", srcRank, "'s callback got count ", count, ", not ", count_);
  if (srcRank < 0 || srcRank >= nranks_) {
    problem = concat("a callback got srcRank ", srcRank);
  } else if (blockBytes_ > 0 && memcmp(chunk, blockPattern(srcRank, blockBytes_, seed_).data(), blockBytes_) != 0) {
    problem = concat("rank ", srcRank, "'s block did not hold its final bytes when its callback ran");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  order_.push_back(srcRank);
  chunks_.push_back(chunk);
  threads_.push_back(std::this_thread::get_id());
  if (!problem.empty()) problems_.push_back(problem);
  running_.fetch_sub(1);
}

void ChunkLog::verify(int rank, const unsigned char* recvbuff, std::thread::id caller) const {
  std::lock_guard<std::mutex> lock(mutex_);
  RANK_CHECK(problems_.empty(), problems_.empty() ? std::string() : problems_.front());
  RANK_CHECK(static_cast<int>(order_.size()) == nranks_, order_.size(), " callbacks for ", nranks_, " ranks");
  RANK_CHECK(order_.front() == rank, "the first callback was for rank ", order_.front(), ", not the own block");
  std::vector<int> sorted = order_;
  std::sort(sorted.begin(), sorted.end());
  for (int r = 0; r < nranks_; ++r) RANK_CHECK(sorted[r] == r, "rank ", r, "'s block was not reported exactly once");
  for (size_t i = 0; i < order_.size(); ++i) {
    RANK_CHECK(chunks_[i] == recvbuff + static_cast<size_t>(order_[i]) * blockBytes_, "rank ", order_[i],
               "'s chunk pointer is not its block of recvbuff");
    RANK_CHECK(threads_[i] != caller, "a callback ran on the calling thread");
  }
}

}  // namespace slimeccl_test
