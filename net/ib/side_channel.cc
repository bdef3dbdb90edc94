#include "net/ib/side_channel.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/sys/fd_io.h"
#include "topo/interfaces.h"

namespace slimeccl {
namespace {

constexpr int kSideChannelConnectTimeoutMs = 10000;

void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setNonBlocking(fd);
}

}  // namespace

slimecclResult_t sideListen(SockAddr* addr, int* fd) {
  NetInterface iface;
  SLIMECCL_CHECK(selectInterface(envString("SLIMECCL_SOCKET_IFNAME"), &iface));
  int s = socket(iface.addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail(slimecclSystemError, "ib: cannot create the side-channel socket: {}", strerror(errno));
  SockAddr bound = iface.addr;
  socklen_t len = bound.length();
  if (bind(s, &bound.u.sa, len) != 0 || ::listen(s, 1024) != 0 || getsockname(s, &bound.u.sa, &len) != 0) {
    int err = errno;
    close(s);
    return fail(slimecclSystemError, "ib: cannot listen on {} ({}): {}", iface.addr.toString(), iface.name,
                strerror(err));
  }
  setNonBlocking(s);
  *addr = bound;
  *fd = s;
  return slimecclSuccess;
}

slimecclResult_t sideConnect(const SockAddr& addr, int* fd) {
  int s = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail(slimecclSystemError, "ib: cannot create the side-channel socket: {}", strerror(errno));
  tune(s);
  int rc = ::connect(s, &addr.u.sa, addr.length());
  int err = rc == 0 ? 0 : errno;
  if (rc != 0 && err == EINPROGRESS) {
    slimecclResult_t wait = waitFd(s, POLLOUT, Deadline::afterMs(kSideChannelConnectTimeoutMs), nullptr);
    socklen_t len = sizeof(err);
    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
    if (wait != slimecclSuccess && err == 0) err = ETIMEDOUT;
  }
  if (err != 0) {
    close(s);
    return fail(slimecclRemoteError, "ib: cannot reach the peer's side channel at {}: {}", addr.toString(),
                strerror(err));
  }
  *fd = s;
  return slimecclSuccess;
}

slimecclResult_t sideRead(int fd, void* buf, size_t len, size_t* got, bool* complete) {
  while (*got < len) {
    ssize_t n = recv(fd, static_cast<char*>(buf) + *got, len - *got, MSG_DONTWAIT);
    if (n > 0) {
      *got += n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    return fail(slimecclRemoteError, "ib: the peer's side channel {} during connection setup",
                n == 0 ? std::string("closed") : std::string("failed: ") + strerror(errno));
  }
  *complete = *got == len;
  return slimecclSuccess;
}

slimecclResult_t sideWrite(int fd, const void* buf, size_t len) {
  return writeFully(fd, buf, len, Deadline::afterMs(kSideChannelConnectTimeoutMs), nullptr);
}

SideState sidePeek(int fd, std::string* why) {
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
  if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) return SideState::Open;
  if (n == 0) return SideState::Closed;
  *why = strerror(errno);
  return SideState::Broken;
}

}  // namespace slimeccl
