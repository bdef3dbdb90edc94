#include "p2p_messages.h"

#include <cstdint>
#include <iterator>
#include <string>

#include "rank_check.h"

namespace slimeccl_test {

namespace {

uint64_t messageSeed(int dst, int round) {
  return 0x5EED0000ull + static_cast<uint64_t>(round) * 1000003ull + static_cast<uint64_t>(dst) * 1009ull;
}

}  // namespace

size_t variedMessageBytes(int src, int dst, int round) {
  return kMessageSizes[static_cast<size_t>(src * 7 + dst * 3 + round) % std::size(kMessageSizes)];
}

GuardedBuffer outgoingMessage(int src, int dst, int round, size_t bytes) {
  GuardedBuffer buffer(bytes);
  fillPattern(buffer.data(), bytes, messageSeed(dst, round), src);
  return buffer;
}

void verifyMessage(const GuardedBuffer& received, int src, int dst, int round) {
  std::string mismatch = patternMismatch(received.data(), received.size(), messageSeed(dst, round), src);
  RANK_CHECK(mismatch.empty(), "message ", round, " from rank ", src, " to rank ", dst, ": ", mismatch);
  std::string damage = received.guardDamage();
  RANK_CHECK(damage.empty(), "receive buffer of message ", round, " from rank ", src, ": ", damage);
}

}  // namespace slimeccl_test
