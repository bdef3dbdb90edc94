// What the socket module puts on the wire before any message: the listen handle (through the
// bootstrap), and the hello that opens every stream.
#pragma once

#include <cstdint>

#include "include/slimeccl_net.h"
#include "net/net.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

constexpr uint32_t kSocketHandleMagic = 0x534f4b31;  // "SOK1"
constexpr uint32_t kStreamHelloMagic = 0x534f4b48;   // "SOKH"
constexpr uint32_t kMaxSocketStreams = 16;

struct SocketHandle {
  uint32_t magic;
  SockAddr addr;
  uint8_t nonce[NetAuth::kNonceBytes];  // what connecting streams prove themselves over
};
static_assert(sizeof(SocketHandle) <= SLIMECCL_NET_HANDLE_MAXSIZE);

// The first bytes of every stream, read whole before anything else: which connection (the
// connecting side's random id) and place it takes, and the connecting rank's proof of the comm's
// secret over the listener's nonce, covering all of that.
struct StreamHello {
  uint32_t magic;
  uint32_t index;
  uint32_t streams;
  uint32_t kind;
  uint64_t connection;
  int32_t rank;
  uint32_t reserved;
  uint8_t proof[NetAuth::kProofBytes];
};

// What the hello claims, as its proof covers it.
inline NetClaim claimOf(const StreamHello& h) {
  return NetClaim{h.rank, h.kind, h.connection, (static_cast<uint64_t>(h.streams) << 32) | h.index};
}

// Stream `index` of `streams` of a connection from `rank`, proved with `auth` over `nonce`.
inline StreamHello makeStreamHello(const NetAuth* auth, const uint8_t* nonce, int rank, uint32_t kind,
                                   uint64_t connection, uint32_t index, uint32_t streams) {
  StreamHello h{kStreamHelloMagic, index, streams, kind, connection, rank, 0, {}};
  if (auth != nullptr) auth->prove(claimOf(h), nonce, h.proof);
  return h;
}

}  // namespace slimeccl
