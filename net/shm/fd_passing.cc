#include "net/shm/fd_passing.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace slimeccl {
namespace {
constexpr int kMaxFds = 4;
}

bool sendWithFds(int socketFd, const void* data, size_t len, const int* fds, int nfds) {
  iovec iov{const_cast<void*>(data), len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  memset(control, 0, sizeof(control));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * nfds);
  }
  return sendmsg(socketFd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(len);
}

int recvWithFds(int socketFd, void* data, size_t len, int* fds, int maxFds) {
  iovec iov{data, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = recvmsg(socketFd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n != static_cast<ssize_t>(len)) return -1;
  int count = 0;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    int received = static_cast<int>((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    const int* incoming = reinterpret_cast<const int*>(CMSG_DATA(cmsg));
    for (int i = 0; i < received; ++i) {
      if (count < maxFds)
        fds[count++] = incoming[i];
      else
        close(incoming[i]);
    }
  }
  return count;
}

}  // namespace slimeccl
