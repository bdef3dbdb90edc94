// Shared-memory net module: each connection is a memfd holding a slot ring and a byte FIFO
// (shm_connection.h), handed from the connecting (sending) side to the accepting side over an
// abstract Unix socket together with the sender's doorbell; the receiver decides whether it can
// read the sender's memory directly (single copy) and answers with its own doorbell.
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "net/net.h"
#include "net/shm/shm_connection.h"
#include "net/shm/fd_passing.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/sys/touch_pages.h"
#include "topo/numa_binding.h"

namespace slimeccl {
namespace {

constexpr uint32_t kHandleMagic = 0x53484d31;  // "SHM1"
constexpr size_t kCtrlFifoBytes = 16 * 1024;
constexpr size_t kSlotCount = 256;
constexpr size_t kShmMaxInflight = 64;

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
  uint64_t probeAddress;  // where the receiver may try a single-copy read of the sender's memory
};

struct ShmListen {
  int fd;
  NetContext ctx;
  std::vector<int> pendingFds;  // accepted sockets whose connect message has not arrived yet
};

constexpr size_t kMaxFifoBytes = size_t{1} << 30;

// v <= kMaxFifoBytes, so the doubling cannot overflow.
size_t roundUpPow2(size_t v) {
  size_t p = 4096;
  while (p < v) p <<= 1;
  return p;
}

size_t dataFifoBytes() {
  static const size_t bytes = roundUpPow2(envBytes("SLIMECCL_SHM_FIFO_BYTES", 512 * 1024, 4096, kMaxFifoBytes));
  return bytes;
}

size_t slotRingBytes() { return SlotRing::mappingBytes(kSlotCount); }
size_t connMappingBytes(size_t fifoCapacity) { return slotRingBytes() + ByteFifo::mappingBytes(fifoCapacity); }
ByteFifoHeader* fifoHeaderOf(void* mapping) {
  return reinterpret_cast<ByteFifoHeader*>(static_cast<char*>(mapping) + slotRingBytes());
}

sockaddr_un abstractAddress(const char* name, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t n = strnlen(name, sizeof(ShmHandle::name));
  memcpy(addr.sun_path + 1, name, n);  // leading NUL: abstract namespace, gone with the socket
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return addr;
}

// The receiver decides once how it may read the sender's buffers: memcpy inside one process,
// process_vm_readv when a test read of the sender's probe word works, else the FIFO only.
SingleCopyMode chooseSingleCopy(const ShmListen* l, int unixFd, uint64_t probeAddress, const ShmSettings& settings,
                                pid_t* peerPid) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(unixFd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    SLIMECCL_INFO(kLogNet, l->ctx.rank, "shm: the peer's process id is unknown; large messages go through the FIFO");
    return SingleCopyMode::Refused;
  }
  *peerPid = cred.pid;
  if (!settings.singleCopy) return SingleCopyMode::Off;
  if (cred.pid == getpid()) return SingleCopyMode::SameProcess;
  std::string why;
  SingleCopyMode mode = probeSingleCopy(cred.pid, probeAddress, &why);
  if (mode == SingleCopyMode::Refused)
    SLIMECCL_INFO(kLogNet, l->ctx.rank,
                  "shm: single copy from process {} is not allowed ({}); large messages go through the FIFO", cred.pid,
                  why);
  return mode;
}

void freeConn(ShmConn* conn) {
  conn->fifo.header()->closed.store(1, std::memory_order_release);
  ringPeer(conn);
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
    h.homeNode = placementOf(ctx).homeNumaNode();
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
    size_t bytes = connMappingBytes(capacity);
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
    // Both ends touch every page of the slots and the FIFO before the first message (see
    // touchPages); here that also places them all.
    touchPages(mapping, bytes);
    SlotRing::format(mapping, kSlotCount);
    ByteFifo::format(fifoHeaderOf(mapping), capacity);
    fifoHeaderOf(mapping)->senderPid = getpid();
    ConnectMessage msg{kShmConnectMagic, static_cast<uint32_t>(kind), capacity,
                       reinterpret_cast<uint64_t>(singleCopyProbeWord())};
    int fds[2] = {memFd, ctx.bell->fd()};
    bool sent = sendWithFds(fd, &msg, sizeof(msg), fds, 2);
    close(memFd);
    if (!sent) {
      munmap(mapping, bytes);
      close(fd);
      return fail(slimecclSystemError, "shm: cannot hand the FIFO to the peer: {}", strerror(errno));
    }
    *sendComm = new ShmConn(true, fd, mapping, bytes, slotRingBytes(), ctx.bell, ShmSettings::fromEnv(ctx));
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
      if (got != 2 || msg.magic != kShmConnectMagic || (msg.capacity & (msg.capacity - 1)) != 0) {
        for (int k = 0; k < got; ++k) close(fds[k]);
        close(fd);
        SLIMECCL_WARN(kLogNet, l->ctx.rank, "shm: dropped a malformed connection attempt");
        return slimecclSuccess;
      }
      size_t bytes = connMappingBytes(msg.capacity);
      void* mapping = mapFd(fds[0], bytes);
      close(fds[0]);
      Bell* peerBell = Bell::attach(fds[1]);
      if (mapping == nullptr || peerBell == nullptr) {
        if (mapping != nullptr) munmap(mapping, bytes);
        delete peerBell;
        close(fd);
        return fail(slimecclSystemError, "shm: cannot map the FIFO handed over by a peer: {}", strerror(errno));
      }
      touchPages(mapping, bytes);
      fifoHeaderOf(mapping)->receiverPid = getpid();
      auto* conn = new ShmConn(false, fd, mapping, bytes, slotRingBytes(), l->ctx.bell, ShmSettings::fromEnv(l->ctx));
      conn->peerBell = peerBell;
      conn->rank = l->ctx.rank;
      conn->mode = chooseSingleCopy(l, fd, msg.probeAddress, conn->settings, &conn->peerPid);
      conn->slots.header()->singleCopyMode.store(static_cast<uint32_t>(conn->mode), std::memory_order_release);
      SLIMECCL_TRACE(kLogNet, l->ctx.rank, "shm: connection from process {}, single copy: {}", conn->peerPid,
                     singleCopyModeName(conn->mode));
      uint32_t magic = kShmConnectMagic;
      int bellFd = l->ctx.bell->fd();
      sendWithFds(fd, &magic, sizeof(magic), &bellFd, 1);
      *recvComm = conn;
      return slimecclSuccess;
    }
    return slimecclSuccess;
  }

  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    return post(static_cast<ShmConn*>(sendComm), const_cast<void*>(data), size, false, request);
  }

  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    return post(static_cast<ShmConn*>(recvComm), data, size, false, request);
  }

  slimecclResult_t irecvStreaming(void* recvComm, void* data, size_t size, void** request) override {
    return post(static_cast<ShmConn*>(recvComm), data, size, true, request);
  }

  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    auto* r = static_cast<ShmRequest*>(request);
    ShmConn* conn = r->conn;
    if (!finished(r)) progressConn(conn);
    if (!finished(r)) {
      std::string gone = peerGone(conn);
      // The peer may have written its last bytes just before closing: take them first.
      if (!gone.empty()) progressConn(conn);
      if (!gone.empty() && !finished(r)) r->failure = gone;
    }
    if (!r->failure.empty()) {
      std::string cause = r->failure;
      size_t moved = r->bodyDone, posted = r->size;
      forget(r);
      return fail(slimecclRemoteError, "shm: {} ({} of {} bytes moved)", cause, moved, posted);
    }
    if (r->truncated) {
      size_t length = r->length, posted = r->size;
      forget(r);
      return fail(slimecclInternalError, "shm: a message of {} bytes arrived for a receive of {} bytes", length,
                  posted);
    }
    *done = r->done;
    if (r->done) {
      *size = conn->sender ? r->size : r->length;
      forget(r);
    }
    return slimecclSuccess;
  }

  slimecclResult_t sendNow(void* sendComm, const void* data, size_t size, NowStatus* status) override {
    *status = sendInlineNow(static_cast<ShmConn*>(sendComm), data, size);
    return slimecclSuccess;
  }

  slimecclResult_t recvNow(void* recvComm, void* data, size_t size, size_t* length, NowStatus* status) override {
    *status = recvInlineNow(static_cast<ShmConn*>(recvComm), data, size, length);
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
  static bool finished(const ShmRequest* r) { return r->done || r->truncated || !r->failure.empty(); }

  // A request reported done has usually left both queues already; one that failed may be anywhere.
  static void forget(ShmRequest* r) {
    ShmConn* conn = r->conn;
    if (!r->done) {
      std::erase(conn->queue, r);
      std::erase(conn->awaitingPull, r);
    }
    conn->idleRequests.push_back(r);
  }

  slimecclResult_t post(ShmConn* conn, void* data, size_t size, bool streaming, void** request) {
    *request = nullptr;
    if (conn->queue.size() + conn->awaitingPull.size() >= kShmMaxInflight) return slimecclSuccess;
    ShmRequest* r;
    if (conn->idleRequests.empty()) {
      conn->requests.push_back(std::make_unique<ShmRequest>());
      r = conn->requests.back().get();
    } else {
      r = conn->idleRequests.back();
      conn->idleRequests.pop_back();
      *r = ShmRequest{};
    }
    r->conn = conn;
    r->data = static_cast<char*>(data);
    r->size = size;
    r->streaming = streaming;
    conn->queue.push_back(r);
    progressConn(conn);
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
