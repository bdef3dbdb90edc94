#include "src/bootstrap/join.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <thread>

#include "src/base/error.h"
#include "src/base/sys/fd_io.h"

namespace slimeccl {
namespace {

constexpr int64_t kVerdictGraceMs = 1000;

slimecclResult_t connectToRoot(const SockAddr& root, int rank, int64_t timeoutMs, const Deadline& deadline, int* out) {
  int backoffMs = 5;
  std::string lastCause = "no answer";
  for (;;) {
    int fd = socket(root.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(slimecclSystemError, "rank {}: cannot create a socket: {}", rank, strerror(errno));
    int rc = connect(fd, &root.u.sa, root.length());
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      if (waitFd(fd, POLLOUT, deadline, nullptr) == slimecclSuccess) {
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      } else {
        err = ETIMEDOUT;
      }
    }
    if (err == 0) {
      *out = fd;
      return slimecclSuccess;
    }
    close(fd);
    lastCause = strerror(err);
    if (deadline.expired())
      return fail(slimecclTimeout, "rank {}: cannot reach the bootstrap root at {} within {} ms ({})", rank,
                  root.toString(), timeoutMs, lastCause);
    std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remainingMsCapped(backoffMs)));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

}  // namespace

slimecclResult_t joinThroughRoot(const UniqueIdContents& id, int nranks, int rank, int64_t timeoutMs,
                                 const RankInfo& mine, std::vector<RankInfo>* table) {
  Deadline deadline = Deadline::afterMs(timeoutMs);
  int fd = -1;
  SLIMECCL_CHECK(connectToRoot(id.root, rank, timeoutMs, deadline, &fd));
  // The root judges missing ranks by the time this rank has left; the rank waits a little past
  // its own deadline to hear that verdict, which names the ranks that never arrived.
  int64_t leftMs = timeoutMs > 0 ? std::max<int64_t>(deadline.remainingMsCapped(INT32_MAX), 1) : 0;
  Deadline replyDeadline = Deadline::afterMs(timeoutMs > 0 ? leftMs + kVerdictGraceMs : 0);
  // The root's challenge first: the hello proves the secret over it.
  char challengeBytes[sizeof(WireHeader) + sizeof(ChallengePayload)];
  Nonce challenge;
  slimecclResult_t rc = readFully(fd, challengeBytes, sizeof(challengeBytes), deadline, nullptr);
  if (rc == slimecclSuccess) rc = parseChallenge(challengeBytes, sizeof(challengeBytes), &challenge);
  if (rc != slimecclSuccess) {
    close(fd);
    prefixThreadError(fmt::format("rank {}: bootstrap root {}: reading its challenge: ", rank, id.root.toString()));
    return rc;
  }
  struct {
    WireHeader header;
    HelloPayload hello;
  } msg{};
  msg.header = {kWireMagic, static_cast<uint32_t>(WireType::Hello), sizeof(HelloPayload), 0};
  msg.hello.proof = proveSecret(id.secret, ProofPurpose::RootHello, 0, challenge);
  msg.hello.nranks = nranks;
  msg.hello.rank = rank;
  msg.hello.timeoutMs = leftMs;
  msg.hello.info = mine;
  rc = writeFully(fd, &msg, sizeof(msg), deadline, nullptr);
  WireHeader reply{};
  if (rc == slimecclSuccess) rc = readFully(fd, &reply, sizeof(reply), replyDeadline, nullptr);
  if (rc != slimecclSuccess) {
    close(fd);
    if (rc == slimecclTimeout)
      return fail(slimecclTimeout,
                  "rank {}: init timed out after {} ms waiting for the other ranks at the bootstrap root {}", rank,
                  timeoutMs, id.root.toString());
    if (rc == slimecclRemoteError)
      return fail(rc,
                  "rank {}: the bootstrap root at {} closed the connection without an answer "
                  "(a unique id with a wrong secret, or a root of another job?)",
                  rank, id.root.toString());
    prefixThreadError(fmt::format("rank {}: bootstrap root {}: ", rank, id.root.toString()));
    return rc;
  }
  if (reply.type == static_cast<uint32_t>(WireType::RootError)) {
    rc = validateRootError(reply);
    int32_t code = slimecclRemoteError;
    std::string text(rc == slimecclSuccess ? reply.length - sizeof(int32_t) : 0, '\0');  // length validated first
    if (rc == slimecclSuccess) rc = readFully(fd, &code, sizeof(code), replyDeadline, nullptr);
    if (rc == slimecclSuccess) rc = readFully(fd, text.data(), text.size(), replyDeadline, nullptr);
    close(fd);
    if (rc != slimecclSuccess) return rc;
    if (code <= slimecclSuccess || code >= slimecclNumResults) code = slimecclRemoteError;
    return fail(static_cast<slimecclResult_t>(code), "rank {}: {}", rank, text);
  }
  rc = validateHeader(reply, WireType::Table, static_cast<uint32_t>(nranks * sizeof(RankInfo)));
  if (rc == slimecclSuccess) {
    table->resize(nranks);
    rc = readFully(fd, table->data(), reply.length, replyDeadline, nullptr);
  }
  close(fd);
  return rc;
}

}  // namespace slimeccl
