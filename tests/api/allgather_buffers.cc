#include "allgather_buffers.h"

#include <numeric>

#include "rank_check.h"

namespace slimeccl_test {

AllGatherBuffers::AllGatherBuffers(int rank, int nranks, size_t count, slimecclDataType_t datatype, bool inPlace,
                                   uint64_t seed, int patternRank)
    : nranks_(nranks), count_(count), datatype_(datatype), inPlace_(inPlace), seed_(seed), patternRank_(patternRank),
      blockBytes_(count * datatypeSize(datatype)), recv_(static_cast<size_t>(nranks) * blockBytes_), rank_(rank) {
  if (inPlace) {
    fillPattern(recv_.data() + static_cast<size_t>(rank) * blockBytes_, blockBytes_, seed, patternRank);
  } else {
    send_.emplace(blockBytes_);
    fillPattern(send_->data(), blockBytes_, seed, patternRank);
  }
}

const void* AllGatherBuffers::sendbuff() const {
  if (send_) return send_->data();
  return recv_.data() + static_cast<size_t>(rank_) * blockBytes_;
}

void AllGatherBuffers::verify(const std::vector<int>& patternRanks) const {
  RANK_CHECK(static_cast<int>(patternRanks.size()) == nranks_, "expected data for ", nranks_, " blocks");
  for (int block = 0; block < nranks_; ++block) {
    std::string mismatch = patternMismatch(recv_.data() + static_cast<size_t>(block) * blockBytes_, blockBytes_, seed_,
                                           patternRanks[block]);
    RANK_CHECK(mismatch.empty(), "receive block ", block, ": ", mismatch);
  }
  std::string damage = recv_.guardDamage();
  RANK_CHECK(damage.empty(), "receive buffer: ", damage);
  if (send_) {
    std::string changed = patternMismatch(send_->data(), blockBytes_, seed_, patternRank_);
    RANK_CHECK(changed.empty(), "the send buffer was modified: ", changed);
    damage = send_->guardDamage();
    RANK_CHECK(damage.empty(), "send buffer: ", damage);
  }
}

void AllGatherBuffers::verify() const {
  std::vector<int> ranks(nranks_);
  std::iota(ranks.begin(), ranks.end(), 0);
  verify(ranks);
}

std::string AllGatherBuffers::describe() const {
  return concat("AllGather of ", count_, " x ", datatypeName(datatype_), inPlace_ ? " in place" : " out of place");
}

}  // namespace slimeccl_test
