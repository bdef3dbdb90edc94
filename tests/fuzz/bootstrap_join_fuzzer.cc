// A joining rank reading the root's reply: the real joinThroughRoot talks to a fake root on
// loopback that answers with the input's bytes (after byte 0, which picks nranks and the rank).
// The outcome must agree with parseRootReply on the same bytes, and nothing may stall or leak.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "src/bootstrap/join.h"
#include "src/base/error.h"
#include "tests/fuzz/fake_root.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/known_secret.h"
#include "tests/fuzz/open_fds.h"

namespace {

using namespace slimeccl;

constexpr int64_t kJoinTimeoutMs = 5000;

// The bytes a rank reads: the header and the payload it announces, or all there is.
size_t messageLength(const std::string& reply) {
  if (reply.size() < sizeof(WireHeader)) return reply.size();
  WireHeader h;
  memcpy(&h, reply.data(), sizeof(h));
  uint64_t announced = sizeof(WireHeader) + static_cast<uint64_t>(h.length);
  return announced < reply.size() ? announced : reply.size();
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto* root = new fuzz::FakeRoot();
  if (size < 1) return 0;
  int nranks = 1 + data[0] % 4;
  int rank = data[0] / 4 % nranks;
  std::string reply(reinterpret_cast<const char*>(data + 1), size - 1);

  int fdsBefore = fuzz::countOpenFds();
  UniqueIdContents id{root->address(), fuzz::knownSecret(), false};
  RankInfo mine{};
  mine.rank = rank;
  std::vector<RankInfo> table;
  root->expect(nranks, rank, reply);
  clearThreadError();
  auto started = std::chrono::steady_clock::now();
  slimecclResult_t rc = joinThroughRoot(id, nranks, rank, kJoinTimeoutMs, mine, &table);
  auto tookMs = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::string sentence = threadError();
  FUZZ_REQUIRE(root->waitServed(10000), "the fake root never saw the rank");
  FUZZ_REQUIRE(fuzz::countOpenFds() == fdsBefore, "joining left a file descriptor open");
  FUZZ_REQUIRE(tookMs.count() < kJoinTimeoutMs / 2, "the rank waited on a root that had already answered");

  RootReply parsed;
  slimecclResult_t parsedRc = parseRootReply(reply.data(), messageLength(reply), nranks, &parsed);
  if (parsedRc != slimecclSuccess) {
    FUZZ_REQUIRE(rc != slimecclSuccess && !sentence.empty(), "the rank accepted a reply that does not parse");
    FUZZ_REQUIRE(rc != slimecclTimeout, "a malformed reply ended in a timeout");
  } else if (parsed.verdict == slimecclSuccess) {
    FUZZ_REQUIRE(rc == slimecclSuccess, "the rank refused a table that parses");
    FUZZ_REQUIRE(table.size() == parsed.table.size() &&
                     memcmp(table.data(), parsed.table.data(), table.size() * sizeof(RankInfo)) == 0,
                 "the rank's table differs from the parsed one");
  } else {
    FUZZ_REQUIRE(rc == parsed.verdict, "the rank's code differs from the root's error code");
    FUZZ_REQUIRE(sentence.find(parsed.errorText) != std::string::npos, "the rank's sentence lost the root's text");
  }
  return 0;
}
