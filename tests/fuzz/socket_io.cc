#include "tests/fuzz/socket_io.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/fuzz/fuzz_check.h"

namespace slimeccl::fuzz {
namespace {

// Waits for events on fd; false when timeoutMs passed first.
bool waitFor(int fd, short events, int timeoutMs) {
  pollfd p{fd, events, 0};
  int rc;
  while ((rc = poll(&p, 1, timeoutMs)) < 0 && errno == EINTR) {}
  return rc > 0;
}

}  // namespace

int connectTo(const SockAddr& addr) {
  int fd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  FUZZ_REQUIRE(fd >= 0, strerror(errno));
  int err = connect(fd, &addr.u.sa, addr.length()) == 0 ? 0 : errno;
  if (err == EINPROGRESS || err == EINTR) {
    FUZZ_REQUIRE(waitFor(fd, POLLOUT, 5000), "connecting on loopback took more than 5 s");
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  }
  FUZZ_REQUIRE(err == 0, strerror(err));
  return fd;
}

size_t sendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += n;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!waitFor(fd, POLLOUT, 5000)) break;
    } else {
      break;
    }
  }
  return sent;
}

size_t recvAll(int fd, void* buf, size_t len, int timeoutMs) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = recv(fd, static_cast<char*>(buf) + got, len - got, MSG_DONTWAIT);
    if (n > 0) {
      got += n;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!waitFor(fd, POLLIN, timeoutMs)) break;
    } else {
      break;
    }
  }
  return got;
}

void waitDelivered(int fd, int timeoutMs) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  int unacknowledged = 0;
  while (ioctl(fd, SIOCOUTQ, &unacknowledged) == 0 && unacknowledged > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

void closeWithReset(int fd) {
  linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  close(fd);
}

}  // namespace slimeccl::fuzz
