// The bootstrap parsers on one message: byte 0 is the context (the nranks a rank expects, the rank
// a ring neighbour must be), the rest a WireHeader and its payload, read as the root reads a
// rank's hello, as a rank reads the root's reply, and as a rank reads its ring neighbour's hello.
#include <cstring>

#include "src/bootstrap/wire.h"
#include "src/base/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/known_secret.h"

namespace {

using namespace slimeccl;

bool headerIs(const uint8_t* msg, size_t len, WireType type, uint32_t length) {
  if (len < sizeof(WireHeader)) return false;
  WireHeader h;
  memcpy(&h, msg, sizeof(h));
  return validateHeader(h, type, length) == slimecclSuccess;
}

void readAsHello(const uint8_t* msg, size_t len) {
  const CommSecret secret = fuzz::knownSecret();
  HelloPayload hello{};
  clearThreadError();
  slimecclResult_t rc = parseHello(msg, len, secret, fuzz::knownChallenge(), &hello);
  FUZZ_REQUIRE(rc == slimecclSuccess || !threadError().empty(), "a rejected hello has no sentence");
  FUZZ_REQUIRE(rc == slimecclSuccess || rc == slimecclRemoteError || rc == slimecclInvalidArgument,
               "a rejected hello gives an unexpected code");
  if (rc != slimecclSuccess) return;
  FUZZ_REQUIRE(headerIs(msg, len, WireType::Hello, sizeof(HelloPayload)), "a hello with a bad header passed");
  FUZZ_REQUIRE(len == sizeof(WireHeader) + sizeof(HelloPayload), "a hello of the wrong size passed");
  FUZZ_REQUIRE(proofHolds(hello.proof, secret, ProofPurpose::RootHello, 0, fuzz::knownChallenge()),
               "a hello without proof of the secret passed");
  FUZZ_REQUIRE(hello.nranks >= 1 && hello.nranks <= kMaxRanks, "a hello with nranks out of range passed");
  FUZZ_REQUIRE(hello.rank >= 0 && hello.rank < hello.nranks, "a hello with a rank out of range passed");
}

void readAsRootReply(const uint8_t* msg, size_t len, int nranks) {
  RootReply reply;
  clearThreadError();
  slimecclResult_t rc = parseRootReply(msg, len, nranks, &reply);
  FUZZ_REQUIRE(rc == slimecclSuccess || (rc == slimecclRemoteError && !threadError().empty()),
               "a rejected reply is not a RemoteError with a sentence");
  if (rc != slimecclSuccess) return;
  if (reply.verdict == slimecclSuccess) {
    uint32_t tableBytes = static_cast<uint32_t>(nranks * sizeof(RankInfo));
    FUZZ_REQUIRE(headerIs(msg, len, WireType::Table, tableBytes), "a table with a bad header passed");
    FUZZ_REQUIRE(reply.table.size() == static_cast<size_t>(nranks), "a table of the wrong size passed");
    FUZZ_REQUIRE(memcmp(reply.table.data(), msg + sizeof(WireHeader), tableBytes) == 0, "the table differs");
    return;
  }
  FUZZ_REQUIRE(reply.verdict > slimecclSuccess && reply.verdict < slimecclNumResults,
               "the root's error code is no failure code");
  FUZZ_REQUIRE(reply.errorText.size() <= kMaxErrorText, "the root's error text is over the limit");
  FUZZ_REQUIRE(len == sizeof(WireHeader) + sizeof(int32_t) + reply.errorText.size(), "the error's size is wrong");
  FUZZ_REQUIRE(reply.table.empty(), "an error reply carries a table");
}

void readAsRingHello(const uint8_t* msg, size_t len, int expectedRank) {
  clearThreadError();
  slimecclResult_t rc = parseRingHello(msg, len, fuzz::knownSecret(), fuzz::knownChallenge(), expectedRank);
  FUZZ_REQUIRE(rc == slimecclSuccess || (rc == slimecclRemoteError && !threadError().empty()),
               "a rejected ring hello is not a RemoteError with a sentence");
  if (rc != slimecclSuccess) return;
  FUZZ_REQUIRE(headerIs(msg, len, WireType::RingHello, sizeof(RingHelloPayload)),
               "a ring hello with a bad header passed");
  RingHelloPayload hello;
  FUZZ_REQUIRE(len == sizeof(WireHeader) + sizeof(hello), "a ring hello of the wrong size passed");
  memcpy(&hello, msg + sizeof(WireHeader), sizeof(hello));
  FUZZ_REQUIRE(hello.rank == expectedRank, "a ring hello from the wrong rank passed");
  FUZZ_REQUIRE(
      proofHolds(hello.proof, fuzz::knownSecret(), ProofPurpose::RingHello, hello.rank, fuzz::knownChallenge()),
      "a ring hello without proof of the secret passed");
}

// What a connecting rank reads first from the root or a ring neighbour.
void readAsChallenge(const uint8_t* msg, size_t len) {
  clearThreadError();
  Nonce nonce;
  slimecclResult_t rc = parseChallenge(msg, len, &nonce);
  FUZZ_REQUIRE(rc == slimecclSuccess || (rc == slimecclRemoteError && !threadError().empty()),
               "a rejected challenge is not a RemoteError with a sentence");
  if (rc != slimecclSuccess) return;
  FUZZ_REQUIRE(headerIs(msg, len, WireType::Challenge, sizeof(ChallengePayload)),
               "a challenge with a bad header passed");
  FUZZ_REQUIRE(len == sizeof(WireHeader) + sizeof(ChallengePayload), "a challenge of the wrong size passed");
  FUZZ_REQUIRE(memcmp(nonce.bytes, msg + sizeof(WireHeader), kNonceBytes) == 0, "the challenge's nonce differs");
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t context = data[0];
  int nranks = 1 + context % 4;
  int ringPrev = context / 4 % nranks;
  const uint8_t* msg = data + 1;
  size_t len = size - 1;
  readAsHello(msg, len);
  readAsRootReply(msg, len, nranks);
  readAsRingHello(msg, len, ringPrev);
  readAsChallenge(msg, len);
  return 0;
}
