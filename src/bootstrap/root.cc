#include "src/bootstrap/root.h"

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <map>
#include <thread>
#include <vector>

#include "src/bootstrap/wire.h"
#include "src/base/error.h"
#include "src/base/sys/fd_io.h"
#include "src/base/sys/time.h"
#include "src/base/util/secure.h"
#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

// Roots running in this process, by address, with their listening sockets, so that a local rank
// can wait for its root.
struct RootRegistry {
  std::mutex mutex;
  std::condition_variable finished;
  std::map<std::string, int> running;
};

RootRegistry*& registrySlot() {
  static RootRegistry* r = new RootRegistry();  // outlives detached root threads at exit
  return r;
}

// A child forked from this process has none of its root threads: it starts with no roots, so its
// ranks do not wait for one that is not there (a forked rank waited kRootDrainMs for the parent's
// root at every init), and it closes its copies of their sockets. Only the forking thread lives on
// in the child; the inherited registry, locked by the fork (see lockRootsForFork), stays allocated.
void forgetRootsInChild() {
  for (const auto& [address, fd] : registrySlot()->running) ::close(fd);
  registrySlot() = new RootRegistry();
}

// Around the fork the registry is locked, so the child never sees it half changed.
void lockRootsForFork() { registrySlot()->mutex.lock(); }
void unlockRootsAfterFork() { registrySlot()->mutex.unlock(); }

RootRegistry& registry() {
  static const bool hooked = pthread_atfork(lockRootsForFork, unlockRootsAfterFork, forgetRootsInChild) == 0;
  (void)hooked;
  return *registrySlot();
}

constexpr size_t kMaxPendingConnections = 1024;
constexpr int64_t kHelloTimeoutMs = 10000;  // a connection must introduce itself within this
constexpr int kReplyTimeoutMs = 10000;

struct Incoming {
  int fd;
  Deadline helloDeadline;
  std::string peer;
  Nonce challenge;  // sent at accept; the hello must prove the secret over it
  size_t got = 0;
  struct {
    WireHeader header;
    HelloPayload hello;
  } msg;
};

struct Joined {
  int fd = -1;
  RankInfo info;
};

class RootServer {
 public:
  RootServer(int listenFd, SockAddr addr, const CommSecret& secret, int64_t idleTimeoutMs)
      : listenFd_(listenFd), addr_(addr), secret_(secret), deadline_(Deadline::afterMs(idleTimeoutMs)) {}
  // The listening socket closes only once the root is out of the registry (see forgetRootsInChild).
  ~RootServer() { close(listenFd_); }
  RootServer(const RootServer&) = delete;
  RootServer& operator=(const RootServer&) = delete;

  void run() {
    while (!finished_) {
      if (deadline_.expired()) {
        timeOut();
        break;
      }
      std::vector<pollfd> fds;
      fds.push_back({listenFd_, POLLIN, 0});
      for (auto& c : incoming_) fds.push_back({c.fd, POLLIN, 0});
      poll(fds.data(), fds.size(), deadline_.remainingMsCapped(100));
      acceptNew();
      readHellos();
    }
    for (auto& c : incoming_) close(c.fd);
    for (auto& j : joined_)
      if (j.fd >= 0) close(j.fd);
  }

 private:
  void acceptNew() {
    for (;;) {
      sockaddr_storage from;
      socklen_t len = sizeof(from);
      int fd = accept4(listenFd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      SockAddr peer;
      memcpy(&peer.u, &from, std::min<size_t>(len, sizeof(peer.u)));
      if (incoming_.size() >= kMaxPendingConnections) {
        SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: too many pending connections, dropped {}",
                      addr_.toString(), peer.toString());
        close(fd);
        continue;
      }
      Incoming c{fd, Deadline::afterMs(kHelloTimeoutMs), peer.toString(), {}, 0, {}};
      if (!sendChallenge(c)) {
        close(fd);
        continue;
      }
      incoming_.push_back(c);
    }
  }

  // A fresh connection's send buffer takes the few bytes at once: a short send means a broken peer.
  bool sendChallenge(Incoming& c) {
    if (!makeNonce(&c.challenge)) {
      SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: cannot read random bytes for a challenge; dropped {}",
                    addr_.toString(), c.peer);
      return false;
    }
    const ChallengeMessage msg = challengeMessage(c.challenge);
    return send(c.fd, &msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(msg));
  }

  void readHellos() {
    for (size_t i = 0; i < incoming_.size();) {
      Incoming& c = incoming_[i];
      char* buf = reinterpret_cast<char*>(&c.msg);
      // Nothing past the proof is read before the proof holds.
      constexpr size_t kThroughProof = sizeof(WireHeader) + sizeof(Proof);
      const size_t want = c.got < kThroughProof ? kThroughProof - c.got : sizeof(c.msg) - c.got;
      ssize_t n = recv(c.fd, buf + c.got, want, MSG_DONTWAIT);
      if (n > 0) c.got += n;
      bool closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
      // Check the header as soon as it is in, and the proof of the secret as soon as it is, so
      // that junk and strangers are dropped before anything else of theirs is read.
      bool badHeader = c.got >= sizeof(WireHeader) &&
                       validateHeader(c.msg.header, WireType::Hello, sizeof(HelloPayload)) != slimecclSuccess;
      bool badProof = !badHeader && c.got >= sizeof(WireHeader) + sizeof(Proof) &&
                      !proofHolds(c.msg.hello.proof, secret_, ProofPurpose::RootHello, 0, c.challenge);
      if (badHeader || badProof || closed || (c.got < sizeof(c.msg) && c.helloDeadline.expired())) {
        SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: dropped connection from {}: {}", addr_.toString(), c.peer,
                      badHeader  ? "not a slimeccl hello"
                      : badProof ? "no proof of the secret"
                      : closed   ? "closed before its hello"
                                 : "no hello in time");
        close(c.fd);
        incoming_.erase(incoming_.begin() + i);
        continue;
      }
      if (c.got < sizeof(c.msg)) {
        ++i;
        continue;
      }
      Incoming done = c;
      incoming_.erase(incoming_.begin() + i);
      admit(done);
    }
  }

  void admit(const Incoming& c) {
    const HelloPayload& h = c.msg.hello;
    if (h.nranks < 1 || h.nranks > kMaxRanks || h.rank < 0 || h.rank >= h.nranks) {
      reject(c.fd, slimecclInvalidArgument,
             fmt::format("rank {} of nranks {} is out of range (nranks 1..{})", h.rank, h.nranks, kMaxRanks));
      return;
    }
    if (nranks_ == 0) {
      nranks_ = h.nranks;
      joined_.resize(nranks_);
      // From the first rank on, the deadline is the ranks' own init timeout.
      deadline_ = Deadline::afterMs(h.timeoutMs);
      timeoutMs_ = h.timeoutMs;
    }
    if (h.nranks != nranks_) {
      reject(c.fd, slimecclInvalidArgument,
             fmt::format("rank {} says nranks is {} but earlier ranks said {}", h.rank, h.nranks, nranks_));
      return;
    }
    if (joined_[h.rank].fd >= 0) {
      reject(c.fd, slimecclInvalidArgument, fmt::format("rank {} joined twice (from {})", h.rank, c.peer));
      return;
    }
    joined_[h.rank].fd = c.fd;
    joined_[h.rank].info = h.info;
    joined_[h.rank].info.rank = h.rank;
    if (++count_ == nranks_) sendTable();
  }

  void reject(int fd, slimecclResult_t code, const std::string& text) {
    SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: {}", addr_.toString(), text);
    sendError(fd, code, text);
    close(fd);
  }

  void sendError(int fd, slimecclResult_t code, const std::string& text) {
    std::string body = text.substr(0, kMaxErrorText);
    WireHeader h{kWireMagic, static_cast<uint32_t>(WireType::RootError),
                 static_cast<uint32_t>(sizeof(int32_t) + body.size()), 0};
    int32_t c = code;
    std::string message(reinterpret_cast<const char*>(&h), sizeof(h));
    message.append(reinterpret_cast<const char*>(&c), sizeof(c));
    message += body;
    writeFully(fd, message.data(), message.size(), Deadline::afterMs(kReplyTimeoutMs), nullptr);
  }

  void sendTable() {
    std::vector<RankInfo> table(nranks_);
    for (int r = 0; r < nranks_; ++r) table[r] = joined_[r].info;
    WireHeader h{kWireMagic, static_cast<uint32_t>(WireType::Table),
                 static_cast<uint32_t>(table.size() * sizeof(RankInfo)), 0};
    std::string message(reinterpret_cast<const char*>(&h), sizeof(h));
    message.append(reinterpret_cast<const char*>(table.data()), h.length);
    for (int r = 0; r < nranks_; ++r) {
      Deadline d = Deadline::afterMs(kReplyTimeoutMs);
      if (writeFully(joined_[r].fd, message.data(), message.size(), d, nullptr) != slimecclSuccess)
        SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: could not send the table to rank {}: {}", addr_.toString(),
                      r, threadError());
    }
    finished_ = true;
  }

  void timeOut() {
    if (nranks_ == 0) {
      SLIMECCL_WARN(kLogBootstrap, -1, "bootstrap root {}: no rank arrived in time; closing", addr_.toString());
      return;
    }
    std::vector<int> missing;
    for (int r = 0; r < nranks_; ++r)
      if (joined_[r].fd < 0) missing.push_back(r);
    std::string text =
        fmt::format("init timed out after {} ms: {} {} of {} never reached the bootstrap root at {}", timeoutMs_,
                    missing.size() == 1 ? "rank" : "ranks", joinInts(missing), nranks_, addr_.toString());
    SLIMECCL_WARN(kLogBootstrap, -1, "{}", text);
    for (auto& j : joined_)
      if (j.fd >= 0) sendError(j.fd, slimecclTimeout, text);
  }

  int listenFd_;
  SockAddr addr_;
  CommSecret secret_;
  Deadline deadline_;
  int64_t timeoutMs_ = 0;
  int nranks_ = 0;
  int count_ = 0;
  bool finished_ = false;
  std::vector<Incoming> incoming_;
  std::vector<Joined> joined_;
};

}  // namespace

slimecclResult_t startRoot(SockAddr* bindAddr, const CommSecret& secret, int64_t idleTimeoutMs) {
  int fd = socket(bindAddr->family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(slimecclSystemError, "bootstrap: cannot create the root socket: {}", strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  socklen_t len = bindAddr->length();
  if (bind(fd, &bindAddr->u.sa, len) != 0 || listen(fd, 1024) != 0 || getsockname(fd, &bindAddr->u.sa, &len) != 0) {
    int err = errno;
    close(fd);
    return fail(slimecclSystemError, "bootstrap: cannot listen on {} for the root: {}", bindAddr->toString(),
                strerror(err));
  }
  auto* server = new RootServer(fd, *bindAddr, secret, idleTimeoutMs);
  std::string key = bindAddr->toString();
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    registry().running.emplace(key, fd);
  }
  std::thread([server, key] {
    server->run();
    {
      // Out of the registry before its socket closes, so a child forked meanwhile never closes
      // a descriptor that has been reused.
      std::lock_guard<std::mutex> lock(registry().mutex);
      registry().running.erase(key);
      registry().finished.notify_all();
    }
    delete server;
  }).detach();
  SLIMECCL_INFO(kLogBootstrap | kLogInit, -1, "bootstrap root listening on {}", bindAddr->toString());
  return slimecclSuccess;
}

void waitForLocalRoot(const SockAddr& addr, int timeoutMs) {
  std::unique_lock<std::mutex> lock(registry().mutex);
  registry().finished.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                               [&] { return registry().running.count(addr.toString()) == 0; });
}

}  // namespace slimeccl
