#include "allgather_buffers.h"

#include <numeric>

#include "rank_check.h"

namespace slimeccl_test {

AllGatherBuffers::AllGatherBuffers(int rank, int nranks, size_t count, slimecclDataType_t datatype, bool in_place,
                                   uint64_t seed, int pattern_rank)
    : nranks_(nranks), count_(count), datatype_(datatype), in_place_(in_place), seed_(seed),
      pattern_rank_(pattern_rank), block_bytes_(count * datatype_size(datatype)),
      recv_(static_cast<size_t>(nranks) * block_bytes_), rank_(rank) {
  if (in_place) {
    fill_pattern(recv_.data() + static_cast<size_t>(rank) * block_bytes_, block_bytes_, seed, pattern_rank);
  } else {
    send_.emplace(block_bytes_);
    fill_pattern(send_->data(), block_bytes_, seed, pattern_rank);
  }
}

const void* AllGatherBuffers::sendbuff() const {
  if (send_) return send_->data();
  return recv_.data() + static_cast<size_t>(rank_) * block_bytes_;
}

void AllGatherBuffers::verify(const std::vector<int>& pattern_ranks) const {
  RANK_CHECK(static_cast<int>(pattern_ranks.size()) == nranks_, "expected data for ", nranks_, " blocks");
  for (int block = 0; block < nranks_; ++block) {
    std::string mismatch = pattern_mismatch(recv_.data() + static_cast<size_t>(block) * block_bytes_, block_bytes_,
                                            seed_, pattern_ranks[block]);
    RANK_CHECK(mismatch.empty(), "receive block ", block, ": ", mismatch);
  }
  std::string damage = recv_.guard_damage();
  RANK_CHECK(damage.empty(), "receive buffer: ", damage);
  if (send_) {
    std::string changed = pattern_mismatch(send_->data(), block_bytes_, seed_, pattern_rank_);
    RANK_CHECK(changed.empty(), "the send buffer was modified: ", changed);
    damage = send_->guard_damage();
    RANK_CHECK(damage.empty(), "send buffer: ", damage);
  }
}

void AllGatherBuffers::verify() const {
  std::vector<int> ranks(nranks_);
  std::iota(ranks.begin(), ranks.end(), 0);
  verify(ranks);
}

std::string AllGatherBuffers::describe() const {
  return concat("AllGather of ", count_, " x ", datatype_name(datatype_), in_place_ ? " in place" : " out of place");
}

}  // namespace slimeccl_test
