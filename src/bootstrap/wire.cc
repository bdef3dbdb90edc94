#include "src/bootstrap/wire.h"

#include <cstring>

#include "src/base/error.h"
#include "src/base/util/secure.h"

namespace slimeccl {
namespace {

// The header of a complete message; RemoteError when the bytes are shorter than one.
slimecclResult_t readHeader(const void* bytes, size_t length, WireHeader* h) {
  if (length < sizeof(WireHeader))
    return fail(slimecclRemoteError, "bootstrap: a message of {} bytes is shorter than its header", length);
  memcpy(h, bytes, sizeof(*h));
  return slimecclSuccess;
}

// A complete message carries exactly the payload its header announces.
slimecclResult_t checkPayloadLength(const WireHeader& h, size_t length) {
  size_t payload = length - sizeof(WireHeader);
  if (payload != h.length)
    return fail(slimecclRemoteError, "bootstrap: message type {} announces {} payload bytes but carries {}", h.type,
                h.length, payload);
  return slimecclSuccess;
}

const char* payloadOf(const void* bytes) { return static_cast<const char*>(bytes) + sizeof(WireHeader); }

}  // namespace

slimecclResult_t validateHeader(const WireHeader& h, WireType expected, uint32_t expectedLength) {
  if (h.magic != kWireMagic)
    return fail(slimecclRemoteError, "bootstrap: a message with a bad magic number arrived (not a slimeccl peer?)");
  if (h.type != static_cast<uint32_t>(expected))
    return fail(slimecclRemoteError, "bootstrap: expected message type {}, got {}", static_cast<uint32_t>(expected),
                h.type);
  if (h.length != expectedLength)
    return fail(slimecclRemoteError, "bootstrap: message type {} has length {}, expected {}", h.type, h.length,
                expectedLength);
  return slimecclSuccess;
}

slimecclResult_t validateRootError(const WireHeader& h) {
  if (h.magic != kWireMagic || h.type != static_cast<uint32_t>(WireType::RootError))
    return fail(slimecclRemoteError, "bootstrap: malformed error message from the root");
  if (h.length < sizeof(int32_t) || h.length > sizeof(int32_t) + kMaxErrorText)
    return fail(slimecclRemoteError, "bootstrap: the root's error message has an invalid length {}", h.length);
  return slimecclSuccess;
}

ChallengeMessage challengeMessage(const Nonce& nonce) {
  return {{kWireMagic, static_cast<uint32_t>(WireType::Challenge), sizeof(ChallengePayload), 0}, {nonce}};
}

slimecclResult_t parseChallenge(const void* bytes, size_t length, Nonce* out) {
  WireHeader h;
  SLIMECCL_CHECK(readHeader(bytes, length, &h));
  SLIMECCL_CHECK(validateHeader(h, WireType::Challenge, sizeof(ChallengePayload)));
  SLIMECCL_CHECK(checkPayloadLength(h, length));
  memcpy(out, payloadOf(bytes), sizeof(*out));
  return slimecclSuccess;
}

slimecclResult_t parseHello(const void* bytes, size_t length, const CommSecret& secret, const Nonce& challenge,
                            HelloPayload* out) {
  WireHeader h;
  SLIMECCL_CHECK(readHeader(bytes, length, &h));
  SLIMECCL_CHECK(validateHeader(h, WireType::Hello, sizeof(HelloPayload)));
  SLIMECCL_CHECK(checkPayloadLength(h, length));
  HelloPayload hello;
  memcpy(&hello, payloadOf(bytes), sizeof(hello));
  if (!proofHolds(hello.proof, secret, ProofPurpose::RootHello, 0, challenge))
    return fail(slimecclRemoteError, "bootstrap: a hello without proof of the secret arrived");
  if (hello.nranks < 1 || hello.nranks > kMaxRanks || hello.rank < 0 || hello.rank >= hello.nranks)
    return fail(slimecclInvalidArgument, "rank {} of nranks {} is out of range (nranks 1..{})", hello.rank,
                hello.nranks, kMaxRanks);
  *out = hello;
  return slimecclSuccess;
}

slimecclResult_t parseRootReply(const void* bytes, size_t length, int nranks, RootReply* out) {
  if (nranks < 1 || nranks > kMaxRanks)
    return fail(slimecclInvalidArgument, "bootstrap: nranks {} is out of range (1..{})", nranks, kMaxRanks);
  WireHeader h;
  SLIMECCL_CHECK(readHeader(bytes, length, &h));
  if (h.type == static_cast<uint32_t>(WireType::RootError)) {
    SLIMECCL_CHECK(validateRootError(h));
    SLIMECCL_CHECK(checkPayloadLength(h, length));
    int32_t code;
    memcpy(&code, payloadOf(bytes), sizeof(code));
    // A code that is no failure would read as success: such an error counts as a RemoteError.
    out->verdict = code <= slimecclSuccess || code >= slimecclNumResults ? slimecclRemoteError
                                                                         : static_cast<slimecclResult_t>(code);
    out->errorText.assign(payloadOf(bytes) + sizeof(code), h.length - sizeof(code));
    out->table.clear();
    return slimecclSuccess;
  }
  SLIMECCL_CHECK(validateHeader(h, WireType::Table, static_cast<uint32_t>(nranks * sizeof(RankInfo))));
  SLIMECCL_CHECK(checkPayloadLength(h, length));
  out->verdict = slimecclSuccess;
  out->errorText.clear();
  out->table.resize(nranks);
  memcpy(out->table.data(), payloadOf(bytes), h.length);
  return slimecclSuccess;
}

slimecclResult_t parseRingHello(const void* bytes, size_t length, const CommSecret& secret, const Nonce& challenge,
                                int expectedRank) {
  WireHeader h;
  SLIMECCL_CHECK(readHeader(bytes, length, &h));
  SLIMECCL_CHECK(validateHeader(h, WireType::RingHello, sizeof(RingHelloPayload)));
  SLIMECCL_CHECK(checkPayloadLength(h, length));
  RingHelloPayload hello;
  memcpy(&hello, payloadOf(bytes), sizeof(hello));
  if (!proofHolds(hello.proof, secret, ProofPurpose::RingHello, hello.rank, challenge))
    return fail(slimecclRemoteError, "bootstrap ring: a hello without proof of the secret arrived");
  if (hello.rank != expectedRank)
    return fail(slimecclRemoteError, "bootstrap ring: a hello from rank {} arrived where rank {} was expected",
                hello.rank, expectedRank);
  return slimecclSuccess;
}

}  // namespace slimeccl
