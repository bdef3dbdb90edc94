#include "sealed_buffer.h"

#include <cstring>

#include "rank_check.h"

namespace slimeccl_test {

void SealedBuffer::seal() { sealed_.assign(buffer_.data(), buffer_.data() + buffer_.size()); }

void SealedBuffer::verifyUnchanged(const char* what) const {
  RANK_CHECK(sealed_.size() == buffer_.size(), what, " was never sealed");
  if (!sealed_.empty() && std::memcmp(sealed_.data(), buffer_.data(), sealed_.size()) != 0) {
    size_t first = 0;
    while (sealed_[first] == buffer_.data()[first]) ++first;
    failRank(__FILE__, __LINE__,
             concat(what, " was modified: byte ", first, " of ", sealed_.size(), " is 0x", std::hex,
                    static_cast<int>(buffer_.data()[first]), ", was 0x", static_cast<int>(sealed_[first])));
  }
  slimeccl_test::verifyGuards(buffer_, what);
}

void SealedBuffer::verifyGuards(const char* what) const { slimeccl_test::verifyGuards(buffer_, what); }

void verifyGuards(const GuardedBuffer& buffer, const char* what) {
  std::string damage = buffer.guardDamage();
  RANK_CHECK(damage.empty(), what, ": ", damage);
}

}  // namespace slimeccl_test
