// What two ib modules exchange: the listen handle (through the bootstrap), the setup record of a
// connection (over its TCP side channel), the receiver's control messages (inline SENDs), the
// header of an announce and the immediate data that announces each arrival.
#pragma once

#include <arpa/inet.h>

#include <cstdint>

#include "include/slimeccl_net.h"
#include "net/ib/ib_params.h"
#include "net/net.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

constexpr uint32_t kIbHandleMagic = 0x49424831;  // "IBH1"
constexpr uint32_t kIbSetupMagic = 0x49425331;   // "IBS1"
constexpr uint32_t kIbSetupVersion = 3;
constexpr uint8_t kIbReadyByte = 0x52;

struct IbHandle {
  uint32_t magic;
  int32_t rank;
  SockAddr sideAddr;                    // the listener's TCP side channel
  uint8_t nonce[NetAuth::kNonceBytes];  // what connecting senders prove themselves over
};
static_assert(sizeof(IbHandle) <= SLIMECCL_NET_HANDLE_MAXSIZE);

// Both sides send one. The accepting (receiving) side adds where the sender may write.
struct IbSetup {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  uint32_t kind;  // ConnKind
  uint32_t qpCount;
  uint32_t psn;
  uint32_t qpn[kIbMaxQpsPerConn];
  uint8_t gid[16];
  uint16_t lid;
  uint8_t linkLayer;
  uint8_t mtu;  // ibv_mtu
  char device[32];
  uint64_t slotsAddr;
  uint64_t recordsAddr;
  uint32_t rkey;
  uint32_t slots;
  uint32_t slotBytes;
  uint32_t records;
  // The sender's random id for the connection, and its proof of the comm's secret over the
  // listener's nonce for its claim (NetAuth), read with the rest of its setup before anything
  // else; the receiver's are zero.
  uint64_t connection;
  uint8_t proof[NetAuth::kProofBytes];
};

// What a sender's setup claims, as its proof covers it.
inline NetClaim claimOf(const IbSetup& setup) { return NetClaim{setup.rank, setup.kind, setup.connection, 0}; }

// How an RDMA WRITE with immediate that lands at the receiver is to be read. The index is the
// message's position on the connection (low 30 bits).
enum class Arrival : uint32_t {
  Eager = 0,     // the message sits in the next eager slot
  Announce = 1,  // the next slot holds only the size of a message that waits for an advert
  Final = 2,     // the message is in the advertised buffer; its size is in the advert's record
  Refused = 3,   // the message is larger than the advertised buffer; its size is in the record
};
constexpr uint32_t kImmIndexBits = 30;
constexpr uint64_t kImmIndexMask = (1ULL << kImmIndexBits) - 1;

inline uint32_t packImm(Arrival arrival, uint64_t index) {
  return htonl((static_cast<uint32_t>(arrival) << kImmIndexBits) | static_cast<uint32_t>(index & kImmIndexMask));
}
inline Arrival immArrival(uint32_t imm) { return static_cast<Arrival>(ntohl(imm) >> kImmIndexBits); }
// The full index of an arrival, read as the nearest to base (the oldest message not complete):
// arrivals are at most a few hundred ahead of it, and one behind it repeats a finished message.
inline int64_t immIndex(uint32_t imm, uint64_t base) {
  uint64_t ahead = (static_cast<uint64_t>(ntohl(imm)) - base) & kImmIndexMask;
  int64_t delta = ahead < (kImmIndexMask + 1) / 2
                      ? static_cast<int64_t>(ahead)
                      : static_cast<int64_t>(ahead) - static_cast<int64_t>(kImmIndexMask + 1);
  return static_cast<int64_t>(base) + delta;
}

// What an announce writes into its slot. An eager message's slot holds its payload alone.
struct SlotHeader {
  uint64_t index;
  uint64_t size;
};

enum class CtrlType : uint32_t { Advert = 1, Credit = 2 };

// Receiver to sender. Every message carries the running count of eager slots freed (the credits).
struct CtrlMsg {
  uint32_t type;
  uint32_t record;  // Advert: where the sender writes the message size
  uint64_t index;   // Advert: the message this buffer is for
  uint64_t addr;
  uint64_t size;
  uint64_t slotsReleased;
  uint32_t rkey;
  uint32_t reserved;
};
static_assert(sizeof(CtrlMsg) == 48);

}  // namespace slimeccl
