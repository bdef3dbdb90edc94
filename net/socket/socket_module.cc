// TCP net module: non-blocking sockets with TCP_NODELAY. A connection is a group of streams;
// a message is a 64-bit length on stream 0 followed by its payload, which is cut into one slice
// per stream when it is large enough for several streams to pay off.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <unordered_set>
#include <vector>

#include "net/net.h"
#include "net/socket/socket_wire.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/sys/fd_io.h"

namespace slimeccl {
namespace {

constexpr size_t kSocketMaxInflight = 64;
constexpr size_t kSplitMinBytes = 64 * 1024;
constexpr int kSocketConnectTimeoutMs = 10000;
constexpr int64_t kHelloTimeoutNs = 10LL * 1000 * 1000 * 1000;

struct PendingStream {
  int fd;
  int64_t acceptedNs;
  StreamHello hello;
  size_t got = 0;
};

struct SocketListen {
  int fd;
  NetContext ctx;
  uint8_t nonce[NetAuth::kNonceBytes];
  std::vector<PendingStream> pending;
  std::map<uint64_t, std::vector<int>> groups;  // connection id -> fds by stream index
  std::unordered_set<uint64_t> taken;           // connection ids whose groups completed
};

struct SocketRequest;

// A contiguous byte range of one request that travels on one stream.
struct Piece {
  SocketRequest* request;
  char* data;
  size_t len;
  size_t done = 0;
};

struct SocketConn {
  bool sender;
  std::vector<int> fds;
  std::vector<std::deque<Piece>> queues;  // per stream, in wire order
  std::deque<SocketRequest*> headerWait;  // receiver: requests whose length is not read yet
  std::unordered_set<SocketRequest*> live;
};

struct SocketRequest {
  SocketConn* conn;
  char* data;
  size_t size;
  uint64_t length = 0;
  size_t headerDone = 0;
  int piecesLeft = 0;
  bool headerRead = false;
  bool done = false;
  slimecclResult_t error = slimecclSuccess;
  std::string errorText;
};

int streamCount(ConnKind kind) {
  static const int streams = [] {
    int n = static_cast<int>(envInt("SLIMECCL_SOCKET_NSOCKS", 2));
    const int most = static_cast<int>(kMaxSocketStreams);
    return n < 1 ? 1 : (n > most ? most : n);
  }();
  return kind == ConnKind::Ctrl ? 1 : streams;
}

void tuneSocket(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setNonBlocking(fd);
}

// Queues the payload pieces of a message of `length` bytes over the connection's streams.
void queueBody(SocketConn* conn, SocketRequest* r, size_t length) {
  int streams = static_cast<int>(conn->fds.size());
  if (length < kSplitMinBytes || streams == 1) {
    if (length > 0) {
      conn->queues[0].push_back(Piece{r, r->data, length});
      ++r->piecesLeft;
    }
    return;
  }
  for (int k = 0; k < streams; ++k) {
    size_t begin = length * k / streams, end = length * (k + 1) / streams;
    if (end > begin) {
      conn->queues[k].push_back(Piece{r, r->data + begin, end - begin});
      ++r->piecesLeft;
    }
  }
}

void failRequest(SocketRequest* r, slimecclResult_t code, std::string text) {
  if (r->error == slimecclSuccess) {
    r->error = code;
    r->errorText = std::move(text);
  }
}

// Moves bytes of one stream's pieces; returns false when the stream is broken.
bool progressStream(SocketConn* conn, int k) {
  std::deque<Piece>& q = conn->queues[k];
  while (!q.empty()) {
    Piece& p = q.front();
    ssize_t n = conn->sender ? send(conn->fds[k], p.data + p.done, p.len - p.done, MSG_NOSIGNAL | MSG_DONTWAIT)
                             : recv(conn->fds[k], p.data + p.done, p.len - p.done, MSG_DONTWAIT);
    if (n > 0) {
      p.done += n;
      if (p.done == p.len) {
        SocketRequest* r = p.request;
        q.pop_front();
        if (--r->piecesLeft == 0 && r->headerRead) r->done = true;
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    std::string cause = n == 0 ? "the peer closed the connection" : strerror(errno);
    failRequest(p.request, slimecclRemoteError, "socket: stream " + std::to_string(k) + " failed: " + cause);
    return false;
  }
  return true;
}

// Receiver: reads message lengths on stream 0 once the previous message's stream-0 piece is done.
bool progressHeaders(SocketConn* conn) {
  while (conn->queues[0].empty() && !conn->headerWait.empty()) {
    SocketRequest* r = conn->headerWait.front();
    ssize_t n = recv(conn->fds[0], reinterpret_cast<char*>(&r->length) + r->headerDone,
                     sizeof(uint64_t) - r->headerDone, MSG_DONTWAIT);
    if (n > 0) {
      r->headerDone += n;
      if (r->headerDone < sizeof(uint64_t)) continue;
      conn->headerWait.pop_front();
      r->headerRead = true;
      if (r->length > r->size) {
        failRequest(r, slimecclInternalError,
                    "socket: a message of " + std::to_string(r->length) + " bytes arrived for a receive of " +
                        std::to_string(r->size) + " bytes");
        return false;
      }
      queueBody(conn, r, r->length);
      if (r->piecesLeft == 0) r->done = true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    failRequest(r, slimecclRemoteError,
                std::string("socket: reading a message length failed: ") +
                    (n == 0 ? "the peer closed the connection" : strerror(errno)));
    return false;
  }
  return true;
}

void progress(SocketConn* conn) {
  for (size_t k = 0; k < conn->fds.size(); ++k) {
    if (!progressStream(conn, static_cast<int>(k))) return;
    if (k == 0 && !conn->sender && !progressHeaders(conn)) return;
    if (k == 0 && !conn->sender && !progressStream(conn, 0)) return;
  }
}

void freeConn(SocketConn* conn) {
  for (int fd : conn->fds) close(fd);
  for (SocketRequest* r : conn->live) delete r;
  delete conn;
}

// A stream joins the group of its connection only if it agrees on the stream count and its index
// is free, and never a group that completed; otherwise a junk or replayed hello would push an
// accepted stream out of its group or open a connection again.
bool fitsGroup(const SocketListen& l, const StreamHello& h) {
  if (l.taken.count(h.connection) != 0) return false;
  auto group = l.groups.find(h.connection);
  return group == l.groups.end() || (group->second.size() == h.streams && group->second[h.index] < 0);
}

// Whether the stream's rank proved its whole hello with the comm's secret (a listener without
// auth asks none).
bool provesItself(const SocketListen& l, const StreamHello& h) {
  return l.ctx.auth == nullptr || (h.kind <= 1 && l.ctx.auth->holds(claimOf(h), l.nonce, h.proof));
}

slimecclResult_t connectStream(const SockAddr& addr, int* out) {
  int fd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(slimecclSystemError, "socket: cannot create a socket: {}", strerror(errno));
  tuneSocket(fd);
  int rc = ::connect(fd, &addr.u.sa, addr.length());
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    return fail(slimecclRemoteError, "socket: cannot connect to {}: {}", addr.toString(), strerror(err));
  }
  if (rc != 0) {
    // The peer's kernel completes the handshake without the peer's help, so this wait is short.
    slimecclResult_t wait = waitFd(fd, POLLOUT, Deadline::afterMs(kSocketConnectTimeoutMs), nullptr);
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (wait != slimecclSuccess || err != 0) {
      close(fd);
      return fail(slimecclRemoteError, "socket: cannot connect to {}: {}", addr.toString(),
                  err != 0 ? strerror(err) : "no answer within 10 s");
    }
  }
  *out = fd;
  return slimecclSuccess;
}

class SocketModule final : public NetModule {
 public:
  const char* name() const override { return "socket"; }

  slimecclResult_t listen(const NetContext& ctx, void* handle, void** listenComm) override {
    // The rank's own NIC unless SLIMECCL_SOCKET_IFNAME says otherwise: peers then reach this rank
    // over the adapter closest to its GPU or NUMA node.
    NetInterface iface;
    SLIMECCL_CHECK(placementOf(ctx).listenInterface(ctx.rank, &iface));
    int fd = socket(iface.addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(slimecclSystemError, "socket: cannot create a socket: {}", strerror(errno));
    SockAddr addr = iface.addr;
    socklen_t len = addr.length();
    if (bind(fd, &addr.u.sa, len) != 0 || ::listen(fd, 1024) != 0 || getsockname(fd, &addr.u.sa, &len) != 0) {
      int err = errno;
      close(fd);
      return fail(slimecclSystemError, "socket: cannot listen on {} ({}): {}", iface.addr.toString(), iface.name,
                  strerror(err));
    }
    setNonBlocking(fd);
    SocketHandle h{kSocketHandleMagic, addr, {}};
    if (ctx.auth != nullptr) memcpy(h.nonce, ctx.auth->listenNonce(), sizeof(h.nonce));
    memcpy(handle, &h, sizeof(h));
    auto* l = new SocketListen{fd, ctx, {}, {}, {}, {}};
    memcpy(l->nonce, h.nonce, sizeof(l->nonce));
    *listenComm = l;
    return slimecclSuccess;
  }

  slimecclResult_t connect(const NetContext& ctx, const void* handle, ConnKind kind, void** sendComm) override {
    *sendComm = nullptr;
    SocketHandle h;
    memcpy(&h, handle, sizeof(h));
    if (h.magic != kSocketHandleMagic || !h.addr.valid())
      return fail(slimecclInternalError, "socket: the peer's connection handle is corrupt");
    int streams = streamCount(kind);
    std::random_device rd;
    const uint64_t connection = (static_cast<uint64_t>(rd()) << 32) | rd();
    auto* conn = new SocketConn{true, {}, std::vector<std::deque<Piece>>(streams), {}, {}};
    for (int k = 0; k < streams; ++k) {
      int fd = -1;
      slimecclResult_t rc = connectStream(h.addr, &fd);
      if (rc != slimecclSuccess) {
        freeConn(conn);
        return rc;
      }
      conn->fds.push_back(fd);
      const StreamHello hello = makeStreamHello(ctx.auth, h.nonce, ctx.rank, static_cast<uint32_t>(kind), connection,
                                                static_cast<uint32_t>(k), static_cast<uint32_t>(streams));
      rc = writeFully(fd, &hello, sizeof(hello), Deadline::afterMs(kSocketConnectTimeoutMs), nullptr);
      if (rc != slimecclSuccess) {
        freeConn(conn);
        return rc;
      }
    }
    *sendComm = conn;
    return slimecclSuccess;
  }

  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    *recvComm = nullptr;
    auto* l = static_cast<SocketListen*>(listenComm);
    for (int fd; (fd = accept4(l->fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      tuneSocket(fd);
      l->pending.push_back(PendingStream{fd, nowNs(), {}});
    }
    for (size_t i = 0; i < l->pending.size();) {
      PendingStream& p = l->pending[i];
      ssize_t n = recv(p.fd, reinterpret_cast<char*>(&p.hello) + p.got, sizeof(StreamHello) - p.got, MSG_DONTWAIT);
      if (n > 0) p.got += n;
      bool waiting = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
      bool complete = p.got == sizeof(StreamHello);
      bool valid = complete && p.hello.magic == kStreamHelloMagic && p.hello.streams >= 1 &&
                   p.hello.streams <= kMaxSocketStreams && p.hello.index < p.hello.streams && fitsGroup(*l, p.hello) &&
                   provesItself(*l, p.hello);
      if (!complete && (waiting || n > 0) && nowNs() - p.acceptedNs < kHelloTimeoutNs) {
        ++i;
        continue;
      }
      if (!valid) {
        SLIMECCL_WARN(kLogNet, l->ctx.rank, "socket: dropped a connection that did not introduce and prove itself");
        close(p.fd);
        l->pending.erase(l->pending.begin() + i);
        continue;
      }
      const uint64_t connection = p.hello.connection;  // p refers to another stream once it leaves pending
      std::vector<int>& group = l->groups[connection];
      group.resize(p.hello.streams, -1);
      group[p.hello.index] = p.fd;
      l->pending.erase(l->pending.begin() + i);
      bool full = true;
      for (int fd : group) full &= fd >= 0;
      if (!full) continue;
      auto* conn = new SocketConn{false, group, std::vector<std::deque<Piece>>(group.size()), {}, {}};
      l->groups.erase(connection);
      l->taken.insert(connection);
      *recvComm = conn;
      return slimecclSuccess;
    }
    return slimecclSuccess;
  }

  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    auto* conn = static_cast<SocketConn*>(sendComm);
    *request = nullptr;
    if (conn->live.size() >= kSocketMaxInflight) return slimecclSuccess;
    auto* r = new SocketRequest{
        conn, static_cast<char*>(const_cast<void*>(data)), size, 0, 0, 0, false, false, slimecclSuccess, {}};
    r->length = size;
    r->headerRead = true;
    conn->queues[0].push_back(Piece{r, reinterpret_cast<char*>(&r->length), sizeof(uint64_t)});
    ++r->piecesLeft;
    queueBody(conn, r, size);
    conn->live.insert(r);
    progress(conn);
    *request = r;
    return slimecclSuccess;
  }

  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    auto* conn = static_cast<SocketConn*>(recvComm);
    *request = nullptr;
    if (conn->live.size() >= kSocketMaxInflight) return slimecclSuccess;
    auto* r = new SocketRequest{conn, static_cast<char*>(data), size, 0, 0, 0, false, false, slimecclSuccess, {}};
    conn->headerWait.push_back(r);
    conn->live.insert(r);
    progress(conn);
    *request = r;
    return slimecclSuccess;
  }

  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    auto* r = static_cast<SocketRequest*>(request);
    if (!r->done && r->error == slimecclSuccess) progress(r->conn);
    if (r->error != slimecclSuccess) {
      slimecclResult_t code = r->error;
      std::string text = r->errorText;
      // The stream is out of step now; the connection cannot be used again.
      r->conn->live.erase(r);
      delete r;
      return setError(code, text);
    }
    *done = r->done;
    if (r->done) {
      *size = r->length;
      r->conn->live.erase(r);
      delete r;
    }
    return slimecclSuccess;
  }

  WaitHint sendWaitHint(void* sendComm) override { return hint(static_cast<SocketConn*>(sendComm), POLLOUT); }
  WaitHint recvWaitHint(void* recvComm) override { return hint(static_cast<SocketConn*>(recvComm), POLLIN); }

  void closeSend(void* sendComm) override { freeConn(static_cast<SocketConn*>(sendComm)); }
  void closeRecv(void* recvComm) override { freeConn(static_cast<SocketConn*>(recvComm)); }
  void closeListen(void* listenComm) override {
    auto* l = static_cast<SocketListen*>(listenComm);
    for (auto& p : l->pending) close(p.fd);
    for (auto& [connection, fds] : l->groups)
      for (int fd : fds)
        if (fd >= 0) close(fd);
    close(l->fd);
    delete l;
  }

 private:
  static WaitHint hint(SocketConn* conn, short events) {
    for (size_t k = 0; k < conn->fds.size(); ++k)
      if (!conn->queues[k].empty()) return WaitHint{conn->fds[k], events, false};
    return WaitHint{conn->fds[0], events, false};
  }
};

}  // namespace

NetModule* socketNetModule() {
  static SocketModule module;
  return &module;
}

}  // namespace slimeccl
