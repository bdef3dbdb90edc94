#include "signal_channel.h"

#include <cerrno>
#include <unistd.h>

#include "system_error.h"

namespace slimeccl::run {

SignalChannel::SignalChannel() {
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (int signalNumber : kForwardedSignals) sigaddset(&handled, signalNumber);
  if (::sigprocmask(SIG_BLOCK, &handled, &original_mask_) != 0) throwSystemError("sigprocmask");
  fd_ = ::signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) {
    int savedErrno = errno;
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    errno = savedErrno;
    throwSystemError("signalfd");
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  if (::sigaction(SIGPIPE, &ignore, &original_pipe_action_) != 0) {
    int savedErrno = errno;
    ::close(fd_);
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    errno = savedErrno;
    throwSystemError("sigaction(SIGPIPE)");
  }
}

SignalChannel::~SignalChannel() {
  ::close(fd_);
  ::sigaction(SIGPIPE, &original_pipe_action_, nullptr);
  ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
}

bool SignalChannel::restoreInChild() const {
  return ::sigaction(SIGPIPE, &original_pipe_action_, nullptr) == 0 &&
         ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr) == 0;
}

std::vector<signalfd_siginfo> SignalChannel::takePending() {
  std::vector<signalfd_siginfo> pending;
  while (true) {
    signalfd_siginfo info;
    ssize_t got = ::read(fd_, &info, sizeof(info));
    if (got == static_cast<ssize_t>(sizeof(info))) {
      pending.push_back(info);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return pending;
    throwSystemError("read from signalfd");
  }
}

}  // namespace slimeccl::run
