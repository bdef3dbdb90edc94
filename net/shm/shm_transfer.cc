// The data path of shm connections: senders put each message's head in the slot ring and its
// payload in the slots (small), the byte FIFO (medium, or when single copy is unavailable) or leave
// it in place for the receiver to pull (large); receivers take messages in the same order.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "net/shm/buffer_handover.h"
#include "net/shm/fd_passing.h"
#include "net/shm/shm_connection.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/sys/process.h"
#include "src/base/sys/stream_copy.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

constexpr int64_t kLivenessIntervalNs = 100 * 1000 * 1000;
// Eager messages are built on the stack: this bounds SLIMECCL_SHM_EAGER_BYTES.
constexpr size_t kMaxEagerBytes = 4096;
// A message moved at once goes whole in the slots up to 2 KiB and a cache line (a 2 KiB payload
// with the few bytes a caller puts in front of it): its sender writes them straight from its
// buffer, where a posted message waits its turn. Two ranks' Send/Recv of 1 and 2 KiB took 0.77 and
// 1.13 us so against 1.05 and 1.3 us through the FIFO; at 4 KiB the slots were slower (1.96 us
// against 1.45).
constexpr size_t kMaxNowInlineBytes = 2048 + 64;

// The receiver's doorbell arrives on the Unix socket after accept; fetch it when first needed.
void fetchPeerBell(ShmConn* conn) {
  if (conn->peerBell != nullptr || conn->unixFd < 0) return;
  uint32_t magic = 0;
  int fd = -1;
  if (recvWithFds(conn->unixFd, &magic, sizeof(magic), &fd, 1) == 1 && magic == kShmConnectMagic) {
    conn->peerBell = Bell::attach(fd);
  }
}

bool canPull(ShmConn* conn, size_t size, size_t fromBytes) {
  if (!conn->settings.singleCopy || size < fromBytes) return false;
  if (conn->mode == SingleCopyMode::Unknown)
    conn->mode = static_cast<SingleCopyMode>(conn->slots.header()->singleCopyMode.load(std::memory_order_acquire));
  return conn->mode == SingleCopyMode::CrossMemory || conn->mode == SingleCopyMode::SameProcess;
}

// A buffer of slimecclMemAlloc in another process is pulled from a smaller size on, since the
// receiver copies it with memcpy from its own mapping of the buffer.
bool canPullShared(ShmConn* conn, const ShmRequest* r, SharedAllocPlace* place) {
  return canPull(conn, r->size, conn->settings.sharedPullBytes) && conn->mode == SingleCopyMode::CrossMemory &&
         findSharedAlloc(r->data, r->size, place);
}

void markPull(ShmConn* conn, ShmRequest* r) {
  r->kind = ShmMessageKind::Pull;
  r->ticket = ++conn->pullsIssued;
}

// Writes a message of at most the eager size whole into the slots, head and payload; false when
// they have no room for it yet.
bool writeInline(ShmConn* conn, const void* data, size_t size) {
  char message[kShmHeadBytes + kMaxEagerBytes];
  const ShmMessageHead head{static_cast<uint32_t>(ShmMessageKind::Inline), size, 0};
  memcpy(message, &head, kShmHeadBytes);
  if (size > 0) memcpy(message + kShmHeadBytes, data, size);
  return conn->slots.write(message, kShmHeadBytes + size);
}

// Copies the payload of the Inline message that `head` announces at the read position into `out`
// and releases its slots; false while some of them have yet to come.
bool takeInline(SlotRing& slots, const ShmMessageHead& head, void* out) {
  const size_t need = SlotRing::slotsFor(kShmHeadBytes + head.length);
  if (!slots.ready(need - 1)) return false;
  if (head.length > 0) slots.copyOut(kShmHeadBytes, out, head.length);
  slots.consume(need);
  return true;
}

// Writes the head of the oldest request (and the whole message when it fits in slots).
bool writeHead(ShmConn* conn, ShmRequest* r) {
  ShmMessageHead head{0, r->size, reinterpret_cast<uint64_t>(r->data)};
  if (r->size <= conn->settings.eagerBytes) {
    if (!writeInline(conn, r->data, r->size)) return false;
    r->kind = ShmMessageKind::Inline;
  } else if (SharedAllocPlace place; canPullShared(conn, r, &place)) {
    char message[kShmPullSharedHeadBytes];
    head.kind = static_cast<uint32_t>(ShmMessageKind::PullShared);
    memcpy(message, &head, kShmPullHeadBytes);
    memcpy(message + kShmPullHeadBytes, &place, sizeof(place));
    releaseBuffer(r->data);
    if (!conn->slots.write(message, sizeof(message))) return false;
    markPull(conn, r);
  } else if (canPull(conn, r->size, conn->settings.singleCopyBytes)) {
    head.kind = static_cast<uint32_t>(ShmMessageKind::Pull);
    releaseBuffer(r->data);
    if (!conn->slots.write(&head, kShmPullHeadBytes)) return false;
    markPull(conn, r);
  } else {
    head.kind = static_cast<uint32_t>(ShmMessageKind::Fifo);
    if (!conn->slots.write(&head, kShmHeadBytes)) return false;
    r->kind = ShmMessageKind::Fifo;
  }
  r->headDone = true;
  return true;
}

bool progressSender(ShmConn* conn) {
  bool moved = false;
  while (!conn->queue.empty()) {
    ShmRequest* r = conn->queue.front();
    if (!r->headDone) {
      if (!writeHead(conn, r)) break;
      moved = true;
    }
    if (r->kind == ShmMessageKind::Fifo) {
      size_t n = conn->fifo.write(r->data + r->bodyDone, r->size - r->bodyDone);
      r->bodyDone += n;
      moved |= n > 0;
      if (r->bodyDone < r->size) break;
    }
    conn->queue.pop_front();
    if (r->kind == ShmMessageKind::Pull) {
      conn->awaitingPull.push_back(r);
    } else {
      r->done = true;
    }
  }
  if (!conn->awaitingPull.empty()) {
    uint64_t pulled = conn->slots.header()->pulled.load(std::memory_order_acquire);
    while (!conn->awaitingPull.empty() && conn->awaitingPull.front()->ticket <= pulled) {
      acquireBuffer(conn->awaitingPull.front()->data);
      conn->awaitingPull.front()->done = true;
      conn->awaitingPull.pop_front();
    }
  }
  return moved;
}

// The sender's shared buffer as mapped here, or nullptr when it cannot be mapped (said once at
// INFO; from then on this connection pulls with the kernel's copy).
const char* mappedSource(ShmConn* conn, const SharedAllocPlace& place, size_t len) {
  if (conn->sharedMapRefused) return nullptr;
  std::string why;
  const char* mapped = conn->peerMappings.find(conn->peerPid, place, len, &why);
  if (mapped == nullptr) {
    conn->sharedMapRefused = true;
    SLIMECCL_INFO(kLogNet, conn->rank, "shm: cannot map the shared buffer of process {} ({}); copying with {}",
                  conn->peerPid, why, singleCopyModeName(conn->mode));
  }
  return mapped;
}

// Copies a pulled message into the posted buffer, then tells the sender its buffer is free.
void pull(ShmConn* conn, ShmRequest* r, uint64_t address, const SharedAllocPlace* source) {
  int err = 0;
  const void* theirs = reinterpret_cast<const void*>(address);
  acquireBuffer(theirs);
  size_t got = 0;
  if (const char* mapped = source != nullptr ? mappedSource(conn, *source, r->length) : nullptr) {
    if (r->streaming)
      copyStreaming(r->data, mapped, r->length);
    else
      memcpy(r->data, mapped, r->length);
    got = r->length;
  } else {
    got = copyFromPeer(conn->mode, conn->peerPid, address, r->data, r->length, conn->settings.pieceBytes, r->streaming,
                       &err);
  }
  releaseBuffer(theirs);
  r->bodyDone = got;
  if (got < r->length) {
    bool gone = err == ESRCH || processGone(conn->peerPid);
    r->failure = gone ? fmt::format("the peer process {} is gone", conn->peerPid)
                      : fmt::format("single copy from process {} failed: {}", conn->peerPid, strerror(err));
    return;
  }
  conn->slots.header()->pulled.store(++conn->pullsDone, std::memory_order_release);
  r->done = true;
}

// Reads the head of the next message for r; false when it has not arrived (or r cannot take it).
bool readHead(ShmConn* conn, ShmRequest* r, bool* finished) {
  SlotRing& slots = conn->slots;
  if (!slots.headReady()) return false;
  ShmMessageHead head{};
  slots.copyOut(0, &head, kShmHeadBytes);
  r->length = head.length;
  r->kind = static_cast<ShmMessageKind>(head.kind);
  switch (r->kind) {
    case ShmMessageKind::Inline:
      if (head.length > r->size) break;
      if (!takeInline(slots, head, r->data)) return false;
      r->done = *finished = true;
      return true;
    case ShmMessageKind::Pull:
    case ShmMessageKind::PullShared: {
      SharedAllocPlace source;
      slots.copyOut(kShmHeadBytes, &head.address, sizeof(head.address));
      const bool shared = r->kind == ShmMessageKind::PullShared;
      if (shared) slots.copyOut(kShmPullHeadBytes, &source, sizeof(source));
      slots.consume(1);
      if (head.length > r->size) {
        // The sender's buffer is released anyway: the mismatch is reported on this side.
        slots.header()->pulled.store(++conn->pullsDone, std::memory_order_release);
        break;
      }
      pull(conn, r, head.address, shared ? &source : nullptr);
      *finished = true;
      return true;
    }
    case ShmMessageKind::Fifo:
      slots.consume(1);
      if (head.length > r->size) break;
      r->headDone = true;
      return true;
    default:
      r->failure = fmt::format("a message of unknown kind {} arrived", head.kind);
      *finished = true;
      return true;
  }
  r->truncated = *finished = true;
  return true;
}

bool progressReceiver(ShmConn* conn) {
  bool moved = false;
  while (!conn->queue.empty()) {
    ShmRequest* r = conn->queue.front();
    if (!r->headDone) {
      bool finished = false;
      if (!readHead(conn, r, &finished)) break;
      moved = true;
      if (finished) {
        conn->queue.pop_front();
        if (r->done) continue;
        break;  // truncated or failed: the stream cannot be trusted past this message
      }
    }
    size_t n = conn->fifo.read(r->data + r->bodyDone, r->length - r->bodyDone);
    r->bodyDone += n;
    moved |= n > 0;
    if (r->bodyDone < r->length) break;
    r->done = true;
    conn->queue.pop_front();
  }
  return moved;
}

}  // namespace

NowStatus sendInlineNow(ShmConn* conn, const void* data, size_t size) {
  const size_t most = conn->settings.eagerBytes == 0 ? 0 : std::max(conn->settings.eagerBytes, kMaxNowInlineBytes);
  if (size > most || !conn->queue.empty() || !conn->awaitingPull.empty() || !writeInline(conn, data, size))
    return NowStatus::UseRequest;
  ringPeer(conn);
  return NowStatus::Done;
}

NowStatus recvInlineNow(ShmConn* conn, void* data, size_t size, size_t* length) {
  if (!conn->queue.empty()) return NowStatus::UseRequest;
  SlotRing& slots = conn->slots;
  if (!slots.headReady()) return NowStatus::NotYet;
  ShmMessageHead head{};
  slots.copyOut(0, &head, kShmHeadBytes);
  // Another kind, or more than `data` holds: a request takes it (and reports a message too long).
  if (static_cast<ShmMessageKind>(head.kind) != ShmMessageKind::Inline || head.length > size)
    return NowStatus::UseRequest;
  if (!takeInline(slots, head, data)) return NowStatus::NotYet;
  ringPeer(conn);
  *length = head.length;
  return NowStatus::Done;
}

void ringPeer(ShmConn* conn) {
  if (conn->sender) fetchPeerBell(conn);
  if (conn->peerBell != nullptr) conn->peerBell->ring();
}

ShmSettings ShmSettings::fromEnv(const NetContext& ctx) {
  const bool pairWithOwnCores = ctx.ranksOnHost == 2 && !ctx.ranksShareCores;
  ShmSettings s;
  s.eagerBytes = std::min(envBytes("SLIMECCL_SHM_EAGER_BYTES", 1024), kMaxEagerBytes);
  s.singleCopyBytes = envBytes("SLIMECCL_SHM_SINGLE_COPY_BYTES", pairWithOwnCores ? 16 * 1024 : 64 * 1024);
  s.singleCopy = envInt("SLIMECCL_SHM_SINGLE_COPY", 1) != 0;
  s.pieceBytes = envBytes("SLIMECCL_SHM_SINGLE_COPY_PIECE_BYTES", size_t{1} << 30);
  if (s.pieceBytes == 0) s.pieceBytes = size_t{1} << 30;
  s.sharedPullBytes = envBytes("SLIMECCL_SHM_SHARED_PULL_BYTES", 16 * 1024);
  return s;
}

void progressConn(ShmConn* conn) {
  bool moved = conn->sender ? progressSender(conn) : progressReceiver(conn);
  if (moved) ringPeer(conn);
}

std::string peerGone(ShmConn* conn) {
  ByteFifoHeader* h = conn->fifo.header();
  if (h->closed.load(std::memory_order_acquire) != 0) return "the peer closed the connection";
  int64_t now = coarseNowNs();
  if (now < conn->nextLivenessCheckNs) return "";
  conn->nextLivenessCheckNs = now + kLivenessIntervalNs;
  int peerPid = conn->sender ? h->receiverPid : h->senderPid;
  if (processGone(peerPid)) return fmt::format("the peer process {} is gone", peerPid);
  return "";
}

}  // namespace slimeccl
