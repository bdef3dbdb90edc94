// Shared-memory net module: each connection is a memfd holding a byte FIFO, handed from the
// connecting (sending) side to the accepting side over an abstract Unix socket together with the
// sender's doorbell; the receiver answers with its own doorbell.
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <unordered_set>
#include <random>
#include <vector>

#include "net/net.h"
#include "net/shm/byte_fifo.h"
#include "net/shm/fd_passing.h"
#include "src/error.h"
#include "src/param.h"
#include "src/sys/time.h"
#include "topo/numa_binding.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

constexpr uint32_t kHandleMagic = 0x53484d31;  // "SHM1"
constexpr uint32_t kConnectMagic = 0x53484d43;
constexpr size_t kCtrlFifoBytes = 16 * 1024;
constexpr size_t kMaxInflight = 64;
constexpr int64_t kLivenessIntervalNs = 100 * 1000 * 1000;

struct ShmHandle {
  uint32_t magic;
  int32_t homeNode;  // the listener's home NUMA node, where its incoming FIFOs belong; -1: no preference
  char name[96];
};
static_assert(sizeof(ShmHandle) <= SLIMECCL_NET_HANDLE_MAXSIZE);

struct ConnectMessage {
  uint32_t magic;
  uint32_t kind;
  uint64_t capacity;
};

struct ShmListen {
  int fd;
  NetContext ctx;
  std::vector<int> pendingFds;  // accepted sockets whose connect message has not arrived yet
};

struct ShmRequest;

struct ShmConn {
  bool sender;
  int unixFd;
  void* mapping;
  size_t mappingBytes;
  ByteFifo fifo;
  Bell* localBell;
  Bell* peerBell = nullptr;  // owned
  std::deque<ShmRequest*> queue;       // posted and not complete, oldest first
  std::unordered_set<ShmRequest*> live;  // not yet reported done by test()
  int64_t nextLivenessCheckNs = 0;
  ShmConn(bool isSender, int fd, void* map, size_t bytes, Bell* local)
      : sender(isSender), unixFd(fd), mapping(map), mappingBytes(bytes), fifo(map), localBell(local) {}
};

struct ShmRequest {
  ShmConn* conn;
  char* data;
  size_t size;
  uint64_t length = 0;  // the message length on the wire (the header)
  size_t headerDone = 0;
  size_t bodyDone = 0;
  bool done = false;
  bool truncated = false;
};

size_t roundUpPow2(size_t v) {
  size_t p = 4096;
  while (p < v) p <<= 1;
  return p;
}

size_t dataFifoBytes() {
  static const size_t bytes = roundUpPow2(envBytes("SLIMECCL_SHM_FIFO_BYTES", 512 * 1024));
  return bytes;
}

sockaddr_un abstractAddress(const char* name, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t n = strnlen(name, sizeof(ShmHandle::name));
  memcpy(addr.sun_path + 1, name, n);  // leading NUL: abstract namespace, gone with the socket
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return addr;
}

// The receiver's doorbell arrives on the Unix socket after accept; fetch it when first needed.
void fetchPeerBell(ShmConn* conn) {
  if (conn->peerBell != nullptr || conn->unixFd < 0) return;
  uint32_t magic = 0;
  int fd = -1;
  if (recvWithFds(conn->unixFd, &magic, sizeof(magic), &fd, 1) == 1 && magic == kConnectMagic) {
    conn->peerBell = Bell::attach(fd);
  }
}

void ringPeer(ShmConn* conn) {
  if (conn->sender) fetchPeerBell(conn);
  if (conn->peerBell != nullptr) conn->peerBell->ring();
}

// Moves as many bytes as possible for the queued requests, oldest first.
void progress(ShmConn* conn) {
  bool moved = false;
  while (!conn->queue.empty()) {
    ShmRequest* r = conn->queue.front();
    if (conn->sender) {
      if (r->headerDone < sizeof(uint64_t)) {
        uint64_t length = r->size;
        size_t n = conn->fifo.write(reinterpret_cast<char*>(&length) + r->headerDone, sizeof(length) - r->headerDone);
        r->headerDone += n;
        moved |= n > 0;
        if (r->headerDone < sizeof(uint64_t)) break;
      }
      size_t n = conn->fifo.write(r->data + r->bodyDone, r->size - r->bodyDone);
      r->bodyDone += n;
      moved |= n > 0;
      if (r->bodyDone < r->size) break;
    } else {
      if (r->headerDone < sizeof(uint64_t)) {
        size_t n = conn->fifo.read(reinterpret_cast<char*>(&r->length) + r->headerDone,
                                   sizeof(uint64_t) - r->headerDone);
        r->headerDone += n;
        moved |= n > 0;
        if (r->headerDone < sizeof(uint64_t)) break;
        if (r->length > r->size) {
          r->truncated = true;
          conn->queue.pop_front();
          break;
        }
      }
      size_t n = conn->fifo.read(r->data + r->bodyDone, r->length - r->bodyDone);
      r->bodyDone += n;
      moved |= n > 0;
      if (r->bodyDone < r->length) break;
    }
    r->done = true;
    conn->queue.pop_front();
  }
  if (moved) ringPeer(conn);
}

// A peer that closed its end, or whose process is gone, will never move these bytes.
std::string peerGone(ShmConn* conn) {
  ByteFifoHeader* h = conn->fifo.header();
  if (h->closed.load(std::memory_order_acquire) != 0) return "the peer closed the connection";
  int64_t now = nowNs();
  if (now < conn->nextLivenessCheckNs) return "";
  conn->nextLivenessCheckNs = now + kLivenessIntervalNs;
  int peerPid = conn->sender ? h->receiverPid : h->senderPid;
  if (peerPid > 0 && peerPid != getpid() && kill(peerPid, 0) != 0 && errno == ESRCH)
    return fmt::format("the peer process {} is gone", peerPid);
  return "";
}

void freeConn(ShmConn* conn) {
  conn->fifo.header()->closed.store(1, std::memory_order_release);
  ringPeer(conn);
  for (ShmRequest* r : conn->live) delete r;
  munmap(conn->mapping, conn->mappingBytes);
  if (conn->unixFd >= 0) close(conn->unixFd);
  delete conn->peerBell;
  delete conn;
}

void* mapFd(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

class ShmModule final : public NetModule {
 public:
  const char* name() const override { return "shm"; }

  slimecclResult_t listen(const NetContext& ctx, void* handle, void** listenComm) override {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(slimecclSystemError, "shm: cannot create a Unix socket: {}", strerror(errno));
    ShmHandle h{};
    h.magic = kHandleMagic;
    h.homeNode = homeNumaNodeToUse();
    std::random_device rd;
    snprintf(h.name, sizeof(h.name), "slimeccl-shm-%d-%08x%08x", getpid(), rd(), rd());
    socklen_t len;
    sockaddr_un addr = abstractAddress(h.name, &len);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 512) != 0) {
      int err = errno;
      close(fd);
      return fail(slimecclSystemError, "shm: cannot listen on a Unix socket: {}", strerror(err));
    }
    memcpy(handle, &h, sizeof(h));
    *listenComm = new ShmListen{fd, ctx, {}};
    return slimecclSuccess;
  }

  slimecclResult_t connect(const NetContext& ctx, const void* handle, ConnKind kind, void** sendComm) override {
    *sendComm = nullptr;
    ShmHandle h;
    memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) return fail(slimecclInternalError, "shm: the peer's connection handle is corrupt");
    h.name[sizeof(h.name) - 1] = '\0';
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(slimecclSystemError, "shm: cannot create a Unix socket: {}", strerror(errno));
    socklen_t len;
    sockaddr_un addr = abstractAddress(h.name, &len);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      int err = errno;
      close(fd);
      if (err == EAGAIN) return slimecclSuccess;  // backlog full: try again
      return fail(slimecclRemoteError,
                  "shm: cannot reach the peer's listener ({}); is the peer on this host and in this network namespace?",
                  strerror(err));
    }
    size_t capacity = kind == ConnKind::Ctrl ? kCtrlFifoBytes : dataFifoBytes();
    size_t bytes = ByteFifo::mappingBytes(capacity);
    int memFd = memfd_create("slimeccl-fifo", MFD_CLOEXEC);
    void* mapping = nullptr;
    if (memFd < 0 || ftruncate(memFd, bytes) != 0 || (mapping = mapFd(memFd, bytes)) == nullptr) {
      int err = errno;
      if (memFd >= 0) close(memFd);
      close(fd);
      return fail(slimecclSystemError, "shm: cannot create a {}-byte shared FIFO: {}", bytes, strerror(err));
    }
    // The receiver polls the FIFO and reads every byte, so its pages go on the receiver's node. The
    // policy is set here, before format() touches the first page, so no page lands elsewhere.
    if (h.homeNode >= 0) {
      slimecclResult_t placed = preferNumaNode(mapping, bytes, h.homeNode);
      if (placed != slimecclSuccess) {
        munmap(mapping, bytes);
        close(memFd);
        close(fd);
        prefixThreadError("shm: ");
        return placed;
      }
    }
    ByteFifo::format(mapping, capacity);
    static_cast<ByteFifoHeader*>(mapping)->senderPid = getpid();
    ConnectMessage msg{kConnectMagic, static_cast<uint32_t>(kind), capacity};
    int fds[2] = {memFd, ctx.bell->fd()};
    bool sent = sendWithFds(fd, &msg, sizeof(msg), fds, 2);
    close(memFd);
    if (!sent) {
      munmap(mapping, bytes);
      close(fd);
      return fail(slimecclSystemError, "shm: cannot hand the FIFO to the peer: {}", strerror(errno));
    }
    *sendComm = new ShmConn(true, fd, mapping, bytes, ctx.bell);
    return slimecclSuccess;
  }

  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    *recvComm = nullptr;
    auto* l = static_cast<ShmListen*>(listenComm);
    int accepted = accept4(l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (accepted >= 0) l->pendingFds.push_back(accepted);
    for (size_t i = 0; i < l->pendingFds.size(); ++i) {
      int fd = l->pendingFds[i];
      ConnectMessage msg{};
      int fds[2] = {-1, -1};
      int got = recvWithFds(fd, &msg, sizeof(msg), fds, 2);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      l->pendingFds.erase(l->pendingFds.begin() + i);
      if (got != 2 || msg.magic != kConnectMagic || (msg.capacity & (msg.capacity - 1)) != 0) {
        for (int k = 0; k < got; ++k) close(fds[k]);
        close(fd);
        SLIMECCL_WARN(kLogNet, l->ctx.rank, "shm: dropped a malformed connection attempt");
        return slimecclSuccess;
      }
      size_t bytes = ByteFifo::mappingBytes(msg.capacity);
      void* mapping = mapFd(fds[0], bytes);
      close(fds[0]);
      Bell* peerBell = Bell::attach(fds[1]);
      if (mapping == nullptr || peerBell == nullptr) {
        if (mapping != nullptr) munmap(mapping, bytes);
        delete peerBell;
        close(fd);
        return fail(slimecclSystemError, "shm: cannot map the FIFO handed over by a peer: {}", strerror(errno));
      }
      static_cast<ByteFifoHeader*>(mapping)->receiverPid = getpid();
      uint32_t magic = kConnectMagic;
      int bellFd = l->ctx.bell->fd();
      sendWithFds(fd, &magic, sizeof(magic), &bellFd, 1);
      auto* conn = new ShmConn(false, fd, mapping, bytes, l->ctx.bell);
      conn->peerBell = peerBell;
      *recvComm = conn;
      return slimecclSuccess;
    }
    return slimecclSuccess;
  }

  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    return post(static_cast<ShmConn*>(sendComm), const_cast<void*>(data), size, request);
  }

  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    return post(static_cast<ShmConn*>(recvComm), data, size, request);
  }

  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    auto* r = static_cast<ShmRequest*>(request);
    if (!r->done && !r->truncated) progress(r->conn);
    if (!r->done && !r->truncated) {
      std::string gone = peerGone(r->conn);
      // The peer may have written its last bytes just before closing: take them first.
      if (!gone.empty()) progress(r->conn);
      if (!gone.empty() && !r->done && !r->truncated) {
        size_t moved = r->bodyDone;
        size_t size = r->size;
        r->conn->live.erase(r);
        std::erase(r->conn->queue, r);
        delete r;
        return fail(slimecclRemoteError, "shm: {} ({} of {} bytes moved)", gone, moved, size);
      }
    }
    if (r->truncated) {
      size_t length = r->length, posted = r->size;
      r->conn->live.erase(r);
      delete r;
      return fail(slimecclInternalError, "shm: a message of {} bytes arrived for a receive of {} bytes", length, posted);
    }
    *done = r->done;
    if (r->done) {
      *size = r->conn->sender ? r->size : r->length;
      r->conn->live.erase(r);
      delete r;
    }
    return slimecclSuccess;
  }

  WaitHint sendWaitHint(void*) override { return WaitHint{-1, 0, true}; }
  WaitHint recvWaitHint(void*) override { return WaitHint{-1, 0, true}; }

  void closeSend(void* sendComm) override { freeConn(static_cast<ShmConn*>(sendComm)); }
  void closeRecv(void* recvComm) override { freeConn(static_cast<ShmConn*>(recvComm)); }
  void closeListen(void* listenComm) override {
    auto* l = static_cast<ShmListen*>(listenComm);
    for (int fd : l->pendingFds) close(fd);
    close(l->fd);
    delete l;
  }

 private:
  slimecclResult_t post(ShmConn* conn, void* data, size_t size, void** request) {
    *request = nullptr;
    if (conn->queue.size() >= kMaxInflight) return slimecclSuccess;
    auto* r = new ShmRequest{conn, static_cast<char*>(data), size};
    conn->queue.push_back(r);
    conn->live.insert(r);
    progress(conn);
    *request = r;
    return slimecclSuccess;
  }
};

}  // namespace

NetModule* shmNetModule() {
  static ShmModule module;
  return &module;
}

}  // namespace slimeccl
