// One shm connection (either end) and its requests. The shared mapping holds the connection's
// slot ring (every message starts there) followed by its byte FIFO (payloads too large for slots
// and too small, or not allowed, for single copy).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "net/bell.h"
#include "net/net.h"
#include "net/shm/byte_fifo.h"
#include "net/shm/peer_mappings.h"
#include "net/shm/single_copy.h"
#include "net/shm/slot_ring.h"
#include "src/base/sys/shared_alloc.h"

namespace slimeccl {

// Opens the connect message (sender to receiver) and the receiver's answer.
constexpr uint32_t kShmConnectMagic = 0x53484d43;

// How a message's payload travels, named in the first bytes of its first slot.
enum class ShmMessageKind : uint32_t {
  Inline = 1,      // in the slots, right after the head
  Fifo = 2,        // in the byte FIFO, after the slots
  Pull = 3,        // in the sender's buffer at `address`: the receiver copies it once
  PullShared = 4,  // as Pull, from a buffer of slimecclMemAlloc that the receiver can map
};

#pragma pack(push, 4)
struct ShmMessageHead {
  uint32_t kind;
  uint64_t length;
  uint64_t address;  // Pull only; the other kinds end before it
};
#pragma pack(pop)
constexpr size_t kShmHeadBytes = offsetof(ShmMessageHead, address);  // Inline and Fifo
constexpr size_t kShmPullHeadBytes = sizeof(ShmMessageHead);

// A PullShared head is followed by where the sender's buffer lies in its memfd.
constexpr size_t kShmPullSharedHeadBytes = kShmPullHeadBytes + sizeof(SharedAllocPlace);
static_assert(kShmPullSharedHeadBytes <= SlotRing::kPayloadBytes, "a PullShared head fits one slot");

// Per-connection settings, read from the environment when the connection is made (docs/env.md).
struct ShmSettings {
  size_t eagerBytes;  // SLIMECCL_SHM_EAGER_BYTES: messages up to this size travel in slots
  // SLIMECCL_SHM_SINGLE_COPY_BYTES: the sender's messages from this size are pulled. By default
  // 16 KiB between the two ranks of a host that each have a core (the pull starts at once and
  // saves the FIFO's second copy), else 64 KiB: where a rank serves several peers or shares its
  // core, a pull waits for the receiver to get to it, while the FIFO lets the sender hand its
  // bytes over and go on, and steps of 16-64 KiB in AllReduce and ReduceScatter took 10-60%
  // longer pulled (docs/performance.md, "Single copy from 16 KiB between two ranks").
  size_t singleCopyBytes;
  bool singleCopy;         // SLIMECCL_SHM_SINGLE_COPY: 0 keeps every payload in the FIFO
  size_t pieceBytes;       // SLIMECCL_SHM_SINGLE_COPY_PIECE_BYTES: most bytes per process_vm_readv
  size_t sharedPullBytes;  // SLIMECCL_SHM_SHARED_PULL_BYTES: buffers of slimecclMemAlloc are pulled from this size
  static ShmSettings fromEnv(const NetContext& ctx);
};

struct ShmConn;

struct ShmRequest {
  ShmConn* conn = nullptr;
  char* data = nullptr;
  size_t size = 0;
  ShmMessageKind kind = ShmMessageKind::Inline;
  uint64_t length = 0;     // the message length on the wire
  bool streaming = false;  // receiver: copies of a pull bypass the caches (copyStreaming)
  bool headDone = false;   // sender: head written; receiver: head read
  size_t bodyDone = 0;
  uint64_t ticket = 0;  // sender, Pull: complete once the receiver has finished this many pulls
  bool done = false;
  bool truncated = false;
  std::string failure;  // receiver: why a single copy stopped
};

struct ShmConn {
  bool sender;
  int unixFd;
  void* mapping;
  size_t mappingBytes;
  SlotRing slots;
  ByteFifo fifo;
  ShmSettings settings;
  Bell* localBell;
  Bell* peerBell = nullptr;                       // owned
  pid_t peerPid = 0;                              // receiver: the sender as this process sees it (SO_PEERCRED)
  SingleCopyMode mode = SingleCopyMode::Unknown;  // receiver: decided at accept
  int rank = -1;                                  // the local rank, for log lines
  PeerMappings peerMappings;                      // receiver: the sender's shared buffers mapped here
  bool sharedMapRefused = false;                  // receiver: a mapping failed once; pulls use the kernel's copy
  std::deque<ShmRequest*> queue;                  // posted, message not fully written or read, oldest first
  std::deque<ShmRequest*> awaitingPull;           // sender: described, waiting for the receiver's copy
  uint64_t pullsIssued = 0;                       // sender: Pull messages written
  uint64_t pullsDone = 0;                         // receiver: Pull messages copied
  // Every request made on this connection; those reported done by test() wait in idleRequests
  // for the next post, so that small messages cost no allocation.
  std::vector<std::unique_ptr<ShmRequest>> requests;
  std::vector<ShmRequest*> idleRequests;
  int64_t nextLivenessCheckNs = 0;
  ShmConn(bool isSender, int fd, void* map, size_t bytes, size_t slotBytes, Bell* local, const ShmSettings& s)
      : sender(isSender), unixFd(fd), mapping(map), mappingBytes(bytes), slots(map),
        fifo(static_cast<char*>(map) + slotBytes), settings(s), localBell(local) {}
};

// Moves as many messages as possible for the queued requests, oldest first.
void progressConn(ShmConn* conn);
// A message of at most the eager size, carried whole in the slots, sent or received at once where
// no request of the connection is in flight (NetModule::sendNow, recvNow).
NowStatus sendInlineNow(ShmConn* conn, const void* data, size_t size);
NowStatus recvInlineNow(ShmConn* conn, void* data, size_t size, size_t* length);
// Rings the peer's doorbell if it sleeps (a sender learns the receiver's doorbell lazily).
void ringPeer(ShmConn* conn);
// A peer that closed its end, or whose process is gone, will never move these bytes ("" if alive).
std::string peerGone(ShmConn* conn);

}  // namespace slimeccl
