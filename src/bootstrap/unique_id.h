// The unique id: where the bootstrap root listens and the secret that ranks must prove.
#pragma once

#include <cstdint>

#include "include/slimeccl.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

constexpr size_t kSecretBytes = 32;

struct CommSecret {
  uint8_t bytes[kSecretBytes];
};

struct UniqueIdContents {
  SockAddr root;
  CommSecret secret;
  bool rootAtRankZero;  // SLIMECCL_COMM_ID: rank 0 starts the root inside init
};

void encodeUniqueId(const UniqueIdContents& contents, slimecclUniqueId* id);
// InvalidArgument with a sentence when the bytes are not an id made by this library.
slimecclResult_t decodeUniqueId(const slimecclUniqueId& id, UniqueIdContents* out);

// The id every process of a launcher job computes alike from SLIMECCL_COMM_ID/SLIMECCL_COMM_SECRET.
slimecclResult_t uniqueIdFromEnv(const char* commId, UniqueIdContents* out);

}  // namespace slimeccl
