// Runs the local ranks to completion: forwards signals, tags output, stops
// everyone when one rank fails or the timeout expires.
#pragma once

#include <chrono>
#include <optional>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <vector>

#include "command_line.h"
#include "file_descriptor.h"
#include "line_tagger.h"
#include "rendezvous.h"
#include "signal_channel.h"

namespace slimeccl::run {

class RankSupervisor {
 public:
  RankSupervisor(const LaunchOptions& options, const Rendezvous& rendezvous);
  // Kills and reaps ranks still running, which only happens when run() did
  // not complete (an error while starting or supervising).
  ~RankSupervisor();
  RankSupervisor(const RankSupervisor&) = delete;
  RankSupervisor& operator=(const RankSupervisor&) = delete;

  // Starts all ranks, waits for them and returns the launcher's exit status.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct OutputStream {
    FileDescriptor pipe;
    LineTagger tagger;
  };

  struct Rank {
    int globalRank = 0;
    pid_t pid = -1;
    bool running = false;
    std::vector<OutputStream> outputs;  // stdout and stderr when tagging
  };

  void startRanks();
  bool anyRunning() const;
  void superviseUntilAllExited();
  int pollTimeoutMilliseconds() const;
  void handleSignal(const signalfd_siginfo& info);
  void reapExitedRanks();
  void recordExit(Rank& rank, int waitStatus);
  void sendToRunning(int signalNumber);
  void stopAllRanks();
  void handleDeadlines();
  enum class ReadResult { kGotData, kNothingYet, kFinished };
  // Reads one chunk if available; closes the pipe at end of file or on error.
  ReadResult readOutput(Rank& rank, OutputStream& output);
  void drainOutputs();

  const LaunchOptions& options_;
  const Rendezvous& rendezvous_;
  SignalChannel signals_;
  std::vector<Rank> ranks_;
  std::optional<int> exit_status_;  // set by the first failure or the timeout
  bool stopping_ = false;
  std::optional<Clock::time_point> timeout_deadline_;
  std::optional<Clock::time_point> kill_deadline_;
};

}  // namespace slimeccl::run
