#include "src/bootstrap/ring.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "src/bootstrap/wire.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/sys/fd_io.h"
#include "src/base/util/secure.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

constexpr int64_t kRingHelloTimeoutMs = 5000;

slimecclResult_t connectWithRetry(const SockAddr& addr, const Deadline& deadline, const std::atomic<bool>* abortFlag,
                                  int* out) {
  int backoffMs = 5;
  for (;;) {
    int fd = socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(slimecclSystemError, "cannot create a socket: {}", strerror(errno));
    int rc = ::connect(fd, &addr.u.sa, addr.length());
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      slimecclResult_t w = waitFd(fd, POLLOUT, deadline, abortFlag);
      if (w != slimecclSuccess) {
        ::close(fd);
        return w;
      }
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      *out = fd;
      return slimecclSuccess;
    }
    ::close(fd);
    if (err != ECONNREFUSED && err != ECONNRESET && err != ETIMEDOUT && err != EHOSTUNREACH && err != ENETUNREACH)
      return fail(slimecclSystemError, "cannot connect to {}: {}", addr.toString(), strerror(err));
    if (abortFlag != nullptr && abortFlag->load()) return fail(slimecclInvalidUsage, "the communicator was aborted");
    if (deadline.expired())
      return fail(slimecclTimeout, "cannot connect to {}: {} until the deadline", addr.toString(), strerror(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remainingMsCapped(backoffMs)));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

}  // namespace

BootstrapRing::~BootstrapRing() { close(); }

void BootstrapRing::close() {
  for (int* fd : {&listenFd_, &nextFd_, &prevFd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

slimecclResult_t BootstrapRing::listen(SockAddr* addr) {
  // The same interface as the socket module, so bootstrap traffic takes the rank's NIC too.
  NetInterface iface;
  SLIMECCL_CHECK(listenInterface(-1, &iface));
  int fd = socket(iface.addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(slimecclSystemError, "bootstrap: cannot create a socket: {}", strerror(errno));
  *addr = iface.addr;
  socklen_t len = addr->length();
  if (bind(fd, &addr->u.sa, len) != 0 || ::listen(fd, 256) != 0 || getsockname(fd, &addr->u.sa, &len) != 0) {
    int err = errno;
    ::close(fd);
    return fail(slimecclSystemError, "bootstrap: cannot listen on {} ({}): {}", iface.addr.toString(), iface.name,
                strerror(err));
  }
  listenFd_ = fd;
  return slimecclSuccess;
}

slimecclResult_t BootstrapRing::form(const std::vector<SockAddr>& addrs, int rank, const CommSecret& secret,
                                     const Deadline& deadline, const std::atomic<bool>* abortFlag) {
  rank_ = rank;
  nranks_ = static_cast<int>(addrs.size());
  if (nranks_ == 1) {
    close();
    return slimecclSuccess;
  }
  int next = (rank + 1) % nranks_, prev = (rank - 1 + nranks_) % nranks_;
  slimecclResult_t rc = connectWithRetry(addrs[next], deadline, abortFlag, &nextFd_);
  if (rc != slimecclSuccess) {
    prefixThreadError(fmt::format("bootstrap ring: rank {} to next rank {}: ", rank, next));
    return rc;
  }
  // The previous rank connects to this one as this one connects to the next, without waiting
  // for an answer: each side first hands its listener's connection a challenge, then answers the
  // one it got, so no rank waits for a rank that waits for it.
  int candidate = -1;
  Nonce challenge;
  SLIMECCL_CHECK(acceptCandidate(rank, prev, deadline, abortFlag, &candidate, &challenge));
  rc = answerChallenge(rank, next, secret, deadline, abortFlag);
  if (rc != slimecclSuccess) {
    ::close(candidate);
    return rc;
  }
  // Accept until the previous rank proves the secret; anything else is dropped.
  while (prevFd_ < 0) {
    struct {
      WireHeader header;
      RingHelloPayload hello;
    } in{};
    Deadline helloDeadline = Deadline::afterMs(kRingHelloTimeoutMs);
    bool ok = readFully(candidate, &in, sizeof(in), helloDeadline, abortFlag) == slimecclSuccess &&
              parseRingHello(&in, sizeof(in), secret, challenge, prev) == slimecclSuccess;
    if (ok) {
      prevFd_ = candidate;
      break;
    }
    SLIMECCL_WARN(kLogBootstrap, rank, "bootstrap ring: dropped a connection that is not rank {} of this comm", prev);
    ::close(candidate);
    SLIMECCL_CHECK(acceptCandidate(rank, prev, deadline, abortFlag, &candidate, &challenge));
  }
  ::close(listenFd_);
  listenFd_ = -1;
  return slimecclSuccess;
}

slimecclResult_t BootstrapRing::acceptCandidate(int rank, int prev, const Deadline& deadline,
                                                const std::atomic<bool>* abortFlag, int* fd, Nonce* challenge) {
  for (;;) {
    slimecclResult_t rc = waitFd(listenFd_, POLLIN, deadline, abortFlag);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("bootstrap ring: rank {} waiting for previous rank {}: ", rank, prev));
      return rc;
    }
    *fd = accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (*fd < 0) continue;
    if (!makeNonce(challenge)) {
      ::close(*fd);
      return fail(slimecclSystemError, "bootstrap ring: rank {}: cannot read random bytes for a challenge", rank);
    }
    const ChallengeMessage out = challengeMessage(*challenge);
    if (writeFully(*fd, &out, sizeof(out), Deadline::afterMs(kRingHelloTimeoutMs), abortFlag) == slimecclSuccess)
      return slimecclSuccess;
    ::close(*fd);
  }
}

slimecclResult_t BootstrapRing::answerChallenge(int rank, int next, const CommSecret& secret, const Deadline& deadline,
                                                const std::atomic<bool>* abortFlag) {
  char in[sizeof(WireHeader) + sizeof(ChallengePayload)];
  Nonce challenge;
  slimecclResult_t rc = readFully(nextFd_, in, sizeof(in), deadline, abortFlag);
  if (rc == slimecclSuccess) rc = parseChallenge(in, sizeof(in), &challenge);
  if (rc == slimecclSuccess) {
    struct {
      WireHeader header;
      RingHelloPayload hello;
    } out{{kWireMagic, static_cast<uint32_t>(WireType::RingHello), sizeof(RingHelloPayload), 0},
          {proveSecret(secret, ProofPurpose::RingHello, rank, challenge), rank, 0}};
    rc = writeFully(nextFd_, &out, sizeof(out), deadline, abortFlag);
  }
  if (rc != slimecclSuccess) prefixThreadError(fmt::format("bootstrap ring: rank {} to next rank {}: ", rank, next));
  return rc;
}

slimecclResult_t BootstrapRing::allgather(void* data, size_t bytesPerRank, const Deadline& deadline,
                                          const std::atomic<bool>* abortFlag) {
  char* slots = static_cast<char*>(data);
  for (int step = 0; step < nranks_ - 1; ++step) {
    int sendSlot = (rank_ - step + nranks_) % nranks_;
    int recvSlot = (rank_ - step - 1 + nranks_) % nranks_;
    slimecclResult_t rc = exchange(nextFd_, slots + sendSlot * bytesPerRank, bytesPerRank, prevFd_,
                                   slots + recvSlot * bytesPerRank, bytesPerRank, deadline, abortFlag);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("bootstrap allgather step {} of {}: ", step + 1, nranks_ - 1));
      return rc;
    }
  }
  return slimecclSuccess;
}

slimecclResult_t BootstrapRing::barrier(const Deadline& deadline, const std::atomic<bool>* abortFlag) {
  std::vector<char> flags(nranks_, 1);
  return allgather(flags.data(), 1, deadline, abortFlag);
}

}  // namespace slimeccl
