// Starting one rank: fork, set up its standard streams and exec the command.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "file_descriptor.h"
#include "signal_channel.h"

namespace slimeccl::run {

struct RankLaunch {
  int globalRank = 0;
  std::vector<std::string> command;
  std::vector<std::string> environment;  // "NAME=value" entries
  bool readsStdin = false;               // otherwise stdin is /dev/null
  bool capturesOutput = false;           // stdout and stderr go to pipes read by the launcher
  std::vector<int> cpus;                 // the CPUs the rank runs on; empty: not bound
};

struct StartedRank {
  pid_t pid = -1;
  FileDescriptor stdoutPipe;  // non-blocking read ends; closed when not captured
  FileDescriptor stderrPipe;
};

// Forks and execs the rank. If exec fails, the rank prints why and exits
// with status 127, like a shell.
StartedRank startRank(const RankLaunch& launch, const SignalChannel& signals);

}  // namespace slimeccl::run
