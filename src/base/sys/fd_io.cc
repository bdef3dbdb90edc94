#include "src/base/sys/fd_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"

namespace slimeccl {
namespace {
// Waits are sliced so that an abort from another thread is seen quickly.
constexpr int kSliceMs = 50;

slimecclResult_t checkWaitState(const Deadline& deadline, const std::atomic<bool>* abortFlag) {
  if (abortFlag != nullptr && abortFlag->load(std::memory_order_acquire))
    return fail(slimecclInvalidUsage, "the communicator was aborted");
  if (deadline.expired()) return fail(slimecclTimeout, "timed out");
  return slimecclSuccess;
}

slimecclResult_t ioError(const char* what, int err) {
  if (err == EPIPE || err == ECONNRESET || err == ENOTCONN)
    return fail(slimecclRemoteError, "{} failed: the peer closed the connection ({})", what, strerror(err));
  return fail(slimecclSystemError, "{} failed: {}", what, strerror(err));
}
}  // namespace

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

slimecclResult_t waitFd(int fd, short events, const Deadline& deadline, const std::atomic<bool>* abortFlag) {
  for (;;) {
    SLIMECCL_CHECK(checkWaitState(deadline, abortFlag));
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, deadline.remainingMsCapped(kSliceMs));
    if (rc > 0) return slimecclSuccess;
    if (rc < 0 && errno != EINTR) return fail(slimecclSystemError, "poll failed: {}", strerror(errno));
  }
}

slimecclResult_t readFully(int fd, void* buf, size_t len, const Deadline& deadline,
                           const std::atomic<bool>* abortFlag) {
  return exchange(-1, nullptr, 0, fd, buf, len, deadline, abortFlag);
}

slimecclResult_t writeFully(int fd, const void* buf, size_t len, const Deadline& deadline,
                            const std::atomic<bool>* abortFlag) {
  return exchange(fd, buf, len, -1, nullptr, 0, deadline, abortFlag);
}

slimecclResult_t exchange(int sendFd, const void* sendBuf, size_t sendLen, int recvFd, void* recvBuf, size_t recvLen,
                          const Deadline& deadline, const std::atomic<bool>* abortFlag) {
  size_t sent = 0, received = 0;
  const char* out = static_cast<const char*>(sendBuf);
  char* in = static_cast<char*>(recvBuf);
  while (sent < sendLen || received < recvLen) {
    bool moved = false;
    if (sent < sendLen) {
      ssize_t n = send(sendFd, out + sent, sendLen - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += n;
        moved = true;
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ioError("send", errno);
      }
    }
    if (received < recvLen) {
      ssize_t n = recv(recvFd, in + received, recvLen - received, MSG_DONTWAIT);
      if (n > 0) {
        received += n;
        moved = true;
      } else if (n == 0) {
        return fail(slimecclRemoteError, "the peer closed the connection after {} of {} bytes", received, recvLen);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ioError("recv", errno);
      }
    }
    if (moved) continue;
    SLIMECCL_CHECK(checkWaitState(deadline, abortFlag));
    pollfd fds[2];
    int nfds = 0;
    if (sent < sendLen) fds[nfds++] = {sendFd, POLLOUT, 0};
    if (received < recvLen) fds[nfds++] = {recvFd, POLLIN, 0};
    int rc = poll(fds, nfds, deadline.remainingMsCapped(kSliceMs));
    if (rc < 0 && errno != EINTR) return fail(slimecclSystemError, "poll failed: {}", strerror(errno));
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
