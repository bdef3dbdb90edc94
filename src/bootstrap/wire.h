// Bootstrap messages between ranks and the root, and between ring neighbours. Every header is
// validated (magic, type, length limits) before anything it describes is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "include/slimeccl_net.h"
#include "src/bootstrap/auth.h"
#include "src/bootstrap/unique_id.h"
#include "src/base/sys/cpu_mask.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

constexpr uint32_t kWireMagic = 0x534c4257;  // "SLBW"
constexpr int kPeerClasses = 2;              // class 0: peers on this host, class 1: peers on other hosts
constexpr int kMaxRanks = 1 << 16;
constexpr uint32_t kMaxErrorText = 1024;

// A listener's first message is a Challenge; the connector's hello answers it with a proof of the
// secret (src/bootstrap/auth.h), which the listener checks before it reads anything else.
enum class WireType : uint32_t { Hello = 1, Table = 2, RootError = 3, RingHello = 4, Challenge = 5 };

struct WireHeader {
  uint32_t magic;
  uint32_t type;
  uint32_t length;  // payload bytes after the header
  uint32_t reserved;
};

// What a rank says at init of a mechanism that serves comms where some rank uses a GPU (GpuScope).
constexpr uint8_t kScopeIndifferent = 0, kScopeWanted = 1, kScopeVeto = 2;

// What every rank publishes about itself.
struct RankInfo {
  uint64_t hostHash;
  char hostId[96];
  int32_t pid;
  int32_t rank;
  SockAddr ringAddr;  // this rank's bootstrap ring listener
  CpuMask cpus;       // where the rank may run, for the idle policy of ranks sharing a host
  // Shared slots (src/exec/mailbox.h): whether this rank can use them, and random bytes that
  // name the comm's segment (rank 0's are used), unique even where comm secrets repeat.
  uint8_t canShareSlots;
  // Whether the rank named its GPU in its config (slimecclConfig_t::cudaDevice): the comm then
  // sets the GPU-to-GPU path up at init.
  uint8_t namedGpu;
  // Whether the rank uses a GPU (named, or current on the thread that made the comm) or asked for
  // chunks everywhere: then every rank runs its staged ops in chunks (src/exec/chunked_run.h).
  uint8_t stagesInChunks;
  // The same for running AllGather in host tiers on a comm across hosts (src/exec/host_tiers.h).
  uint8_t hostTiers;
  uint64_t stagingChunkBytes;  // SLIMECCL_STAGING_CHUNK_BYTES; rank 0's counts
  uint8_t slotsNonce[16];
  // Connections of net modules to this rank prove the comm secret over this nonce (they carry
  // one direction only, so this rank cannot hand each one a challenge).
  Nonce connectionNonce;
  uint8_t netHandles[kPeerClasses][SLIMECCL_NET_HANDLE_MAXSIZE];
};

struct ChallengePayload {
  Nonce nonce;
};

// A listener's challenge as it goes on the wire.
struct ChallengeMessage {
  WireHeader header;
  ChallengePayload challenge;
};
ChallengeMessage challengeMessage(const Nonce& nonce);

// The proof comes first, so that the listener checks it before it reads the rest.
struct HelloPayload {
  Proof proof;  // ProofPurpose::RootHello over the root's challenge
  int32_t nranks;
  int32_t rank;
  int64_t timeoutMs;
  RankInfo info;
};

struct RingHelloPayload {
  Proof proof;  // ProofPurpose::RingHello over the listener's challenge, bound to `rank`
  int32_t rank;
  int32_t reserved;
};

// Checks magic, type and the payload length expected for that type (nranks for a table).
slimecclResult_t validateHeader(const WireHeader& h, WireType expected, uint32_t expectedLength);
// Root error payload: a result code then text; the length limit is checked by validateRootError.
slimecclResult_t validateRootError(const WireHeader& h);

// Whole-message parsers: the checks the root, a joining rank and a ring neighbour make on one
// complete message, in the order they make them, as pure functions of the bytes (fuzzed in
// tests/fuzz). Each returns a failure with a sentence and leaves *out untouched unless it succeeds.

// A listener's challenge, read by the connecting side; RemoteError for anything else.
slimecclResult_t parseChallenge(const void* bytes, size_t length, Nonce* out);

// A rank's hello at the root: header, then the proof over the root's `challenge` (constant time),
// then the rank's place. RemoteError for junk or a wrong proof, InvalidArgument for a rank or
// nranks out of range.
slimecclResult_t parseHello(const void* bytes, size_t length, const CommSecret& secret, const Nonce& challenge,
                            HelloPayload* out);

// The root's answer to a rank: the table of every rank, or the root's error.
struct RootReply {
  slimecclResult_t verdict = slimecclSuccess;  // the root's code when it sent an error (never Success then)
  std::string errorText;
  std::vector<RankInfo> table;  // nranks entries when verdict is Success
};
// A reply read by a rank that expects nranks entries; RemoteError when the bytes are neither.
slimecclResult_t parseRootReply(const void* bytes, size_t length, int nranks, RootReply* out);

// A ring neighbour's hello: header, the proof over this rank's `challenge`, and the rank it must
// come from.
slimecclResult_t parseRingHello(const void* bytes, size_t length, const CommSecret& secret, const Nonce& challenge,
                                int expectedRank);

}  // namespace slimeccl
