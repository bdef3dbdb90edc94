#include "rank_supervisor.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_binding.h"
#include "rank_environment.h"
#include "rank_process.h"
#include "system_error.h"

namespace slimeccl::run {
namespace {

constexpr auto kKillGracePeriod = std::chrono::seconds(3);
constexpr int kTimeoutExitStatus = 124;
constexpr size_t kReadChunkBytes = 64 * 1024;

}  // namespace

RankSupervisor::RankSupervisor(const LaunchOptions& options, const Rendezvous& rendezvous)
    : options_(options), rendezvous_(rendezvous) {}

RankSupervisor::~RankSupervisor() {
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    ::kill(rank.pid, SIGKILL);
    while (::waitpid(rank.pid, nullptr, 0) < 0 && errno == EINTR) {}
  }
}

int RankSupervisor::run() {
  startRanks();
  if (options_.timeoutSeconds) {
    timeout_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(*options_.timeoutSeconds));
  }
  superviseUntilAllExited();
  drainOutputs();
  return exit_status_.value_or(0);
}

void RankSupervisor::startRanks() {
  ranks_.reserve(static_cast<size_t>(options_.localRanks));
  const std::vector<std::vector<int>> cpuSets = rankCpuSets(options_);
  for (int localRank = 0; localRank < options_.localRanks; ++localRank) {
    RankLaunch launch;
    if (!cpuSets.empty()) launch.cpus = cpuSets[static_cast<size_t>(localRank)];
    launch.globalRank = options_.globalRank(localRank);
    launch.command = options_.command;
    launch.environment = rankEnvironment(options_, rendezvous_, localRank);
    launch.readsStdin = launch.globalRank == 0;
    launch.capturesOutput = options_.tagOutput;

    StartedRank started = startRank(launch, signals_);
    Rank& rank = ranks_.emplace_back();
    rank.globalRank = launch.globalRank;
    rank.pid = started.pid;
    rank.running = true;
    if (options_.tagOutput) {
      rank.outputs.push_back({std::move(started.stdoutPipe), LineTagger(STDOUT_FILENO, rank.globalRank)});
      rank.outputs.push_back({std::move(started.stderrPipe), LineTagger(STDERR_FILENO, rank.globalRank)});
    }
  }
}

bool RankSupervisor::anyRunning() const {
  for (const Rank& rank : ranks_) {
    if (rank.running) return true;
  }
  return false;
}

void RankSupervisor::superviseUntilAllExited() {
  struct OutputSource {
    Rank* rank;
    OutputStream* output;
  };
  std::vector<pollfd> pollFds;
  std::vector<OutputSource> sources;  // sources[i] belongs to poll_fds[i + 1]

  while (anyRunning()) {
    pollFds.assign(1, pollfd{signals_.fd(), POLLIN, 0});
    sources.clear();
    for (Rank& rank : ranks_) {
      for (OutputStream& output : rank.outputs) {
        if (!output.pipe.isOpen()) continue;
        pollFds.push_back(pollfd{output.pipe.get(), POLLIN, 0});
        sources.push_back({&rank, &output});
      }
    }

    int ready = ::poll(pollFds.data(), pollFds.size(), pollTimeoutMilliseconds());
    if (ready < 0) {
      if (errno == EINTR) continue;
      throwSystemError("poll");
    }
    // Output first, so that what a rank wrote before dying is shown before
    // the launcher's report of its death.
    for (size_t i = 0; i < sources.size(); ++i) {
      if (pollFds[i + 1].revents == 0) continue;
      readOutput(*sources[i].rank, *sources[i].output);
    }
    if (pollFds[0].revents != 0) {
      for (const signalfd_siginfo& info : signals_.takePending()) handleSignal(info);
    }
    handleDeadlines();
  }
}

int RankSupervisor::pollTimeoutMilliseconds() const {
  std::optional<Clock::time_point> next;
  for (const auto& deadline : {timeout_deadline_, kill_deadline_}) {
    if (deadline && (!next || *deadline < *next)) next = deadline;
  }
  if (!next) return -1;
  auto remaining = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now());
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(remaining.count(), 0));
}

void RankSupervisor::handleSignal(const signalfd_siginfo& info) {
  int signalNumber = static_cast<int>(info.ssi_signo);
  if (signalNumber == SIGCHLD) {
    reapExitedRanks();
    return;
  }
  // Signals from the terminal (Ctrl-C, Ctrl-\, hangup) come from the kernel
  // and already went to the whole foreground process group, ranks included;
  // forwarding them would deliver them twice.
  if (info.ssi_code == SI_KERNEL) return;
  sendToRunning(signalNumber);
}

void RankSupervisor::reapExitedRanks() {
  while (true) {
    int waitStatus = 0;
    pid_t pid = ::waitpid(-1, &waitStatus, WNOHANG);
    if (pid == 0) return;
    if (pid < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) return;
      throwSystemError("waitpid");
    }
    for (Rank& rank : ranks_) {
      if (rank.pid == pid && rank.running) recordExit(rank, waitStatus);
    }
  }
}

void RankSupervisor::recordExit(Rank& rank, int waitStatus) {
  rank.running = false;
  bool failed = !WIFEXITED(waitStatus) || WEXITSTATUS(waitStatus) != 0;
  // Once stopping, deaths are the launcher's own doing and not reported.
  if (!failed || stopping_) return;

  const char* stoppingOthers = anyRunning() ? "; stopping the other ranks" : "";
  if (WIFSIGNALED(waitStatus)) {
    int signalNumber = WTERMSIG(waitStatus);
    std::fprintf(stderr, "slimeccl-run: rank %d (pid %d) was killed by signal %d (%s)%s\n", rank.globalRank,
                 static_cast<int>(rank.pid), signalNumber, strsignal(signalNumber), stoppingOthers);
    exit_status_ = 128 + signalNumber;
  } else {
    std::fprintf(stderr, "slimeccl-run: rank %d (pid %d) exited with status %d%s\n", rank.globalRank,
                 static_cast<int>(rank.pid), WEXITSTATUS(waitStatus), stoppingOthers);
    exit_status_ = WEXITSTATUS(waitStatus);
  }
  stopAllRanks();
}

void RankSupervisor::sendToRunning(int signalNumber) {
  for (const Rank& rank : ranks_) {
    // An exited but unreaped rank keeps its pid, so a running rank's pid
    // cannot have been reused.
    if (rank.running && ::kill(rank.pid, signalNumber) != 0) {
      std::fprintf(stderr, "slimeccl-run: cannot send signal %d to rank %d (pid %d): %s\n", signalNumber,
                   rank.globalRank, static_cast<int>(rank.pid), std::strerror(errno));
    }
  }
}

void RankSupervisor::stopAllRanks() {
  stopping_ = true;
  timeout_deadline_.reset();
  sendToRunning(SIGTERM);
  kill_deadline_ = Clock::now() + kKillGracePeriod;
}

void RankSupervisor::handleDeadlines() {
  Clock::time_point now = Clock::now();
  if (timeout_deadline_ && now >= *timeout_deadline_) {
    std::fprintf(stderr, "slimeccl-run: timeout of %g s expired; stopping all ranks\n", *options_.timeoutSeconds);
    exit_status_ = kTimeoutExitStatus;
    stopAllRanks();
  }
  if (kill_deadline_ && now >= *kill_deadline_ && anyRunning()) {
    std::fprintf(stderr, "slimeccl-run: ranks still running %lld s after SIGTERM; sending SIGKILL\n",
                 static_cast<long long>(kKillGracePeriod.count()));
    sendToRunning(SIGKILL);
    kill_deadline_.reset();
  }
}

RankSupervisor::ReadResult RankSupervisor::readOutput(Rank& rank, OutputStream& output) {
  char buffer[kReadChunkBytes];
  ssize_t got = ::read(output.pipe.get(), buffer, sizeof(buffer));
  if (got > 0) {
    output.tagger.append(std::string_view(buffer, static_cast<size_t>(got)));
    return ReadResult::kGotData;
  }
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return ReadResult::kNothingYet;
  if (got < 0) {
    std::fprintf(stderr, "slimeccl-run: cannot read output of rank %d: %s\n", rank.globalRank, std::strerror(errno));
  }
  output.pipe.reset();
  return ReadResult::kFinished;
}

// After every rank exited, what they wrote is already in the pipes. Reading
// stops at the first empty read rather than at end of file, since a rank's
// background children may hold a pipe open indefinitely.
void RankSupervisor::drainOutputs() {
  for (Rank& rank : ranks_) {
    for (OutputStream& output : rank.outputs) {
      while (output.pipe.isOpen() && readOutput(rank, output) == ReadResult::kGotData) {}
      output.tagger.flushPartialLine();
      output.pipe.reset();
    }
  }
}

}  // namespace slimeccl::run
