// The launcher's signal setup: forwarded signals and SIGCHLD arrive through a
// file descriptor, so the poll loop handles them instead of asynchronous
// handlers, and SIGPIPE is ignored so a closed output gives EPIPE instead of
// killing the launcher.
#pragma once

#include <array>
#include <csignal>
#include <sys/signalfd.h>
#include <vector>

namespace slimeccl::run {

// Signals passed on to every rank.
inline constexpr std::array<int, 6> kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

class SignalChannel {
 public:
  // Blocks the forwarded signals and SIGCHLD, opens a signalfd for them and
  // ignores SIGPIPE.
  SignalChannel();
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_; }

  // Called in a forked rank before exec: gives back the original signal mask
  // and SIGPIPE disposition, since both would otherwise survive exec.
  // Returns false on failure, leaving errno set.
  bool restoreInChild() const;

  // The signals that arrived since the last call; never blocks.
  std::vector<signalfd_siginfo> takePending();

 private:
  int fd_ = -1;
  sigset_t original_mask_{};
  struct sigaction original_pipe_action_ {};
};

}  // namespace slimeccl::run
