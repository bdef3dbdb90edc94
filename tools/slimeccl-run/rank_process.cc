#include "rank_process.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "system_error.h"

namespace slimeccl::run {
namespace {

struct Pipe {
  FileDescriptor readEnd;
  FileDescriptor writeEnd;
};

Pipe makeOutputPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throwSystemError("pipe2");
  Pipe made{FileDescriptor(fds[0]), FileDescriptor(fds[1])};
  if (::fcntl(made.readEnd.get(), F_SETFL, O_NONBLOCK) != 0) throwSystemError("fcntl(O_NONBLOCK)");
  return made;
}

std::vector<char*> nullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

[[noreturn]] void failInChild(int globalRank, const char* what) {
  ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: %s: %s\n", globalRank, what, std::strerror(errno));
  ::_exit(127);
}

// Runs in the forked child; everything it needs was prepared before fork.
[[noreturn]] void execRank(int globalRank, const SignalChannel& signals, pid_t launcherPid, const cpu_set_t* cpus,
                           int stdinFd, int stdoutFd, int stderrFd, char* const* argv, char* const* envp) {
  if (!signals.restoreInChild()) failInChild(globalRank, "cannot restore signal settings");
  // A rank whose launcher died (even by SIGKILL) would otherwise wait forever
  // for peers that are never coming.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) failInChild(globalRank, "prctl(PR_SET_PDEATHSIG)");
  if (::getppid() != launcherPid) ::_exit(128 + SIGTERM);
  // Unbound is slower, not wrong: say so and go on.
  if (cpus != nullptr && ::sched_setaffinity(0, sizeof(*cpus), cpus) != 0)
    ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: cannot bind to its CPUs: %s\n", globalRank, std::strerror(errno));
  if (stdinFd >= 0 && ::dup2(stdinFd, STDIN_FILENO) < 0) failInChild(globalRank, "cannot redirect stdin");
  if (stdoutFd >= 0 && ::dup2(stdoutFd, STDOUT_FILENO) < 0) failInChild(globalRank, "cannot redirect stdout");
  if (stderrFd >= 0 && ::dup2(stderrFd, STDERR_FILENO) < 0) failInChild(globalRank, "cannot redirect stderr");
  ::execvpe(argv[0], argv, envp);
  ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: cannot execute '%s': %s\n", globalRank, argv[0],
            std::strerror(errno));
  ::_exit(127);
}

}  // namespace

StartedRank startRank(const RankLaunch& launch, const SignalChannel& signals) {
  FileDescriptor nullStdin;
  if (!launch.readsStdin) {
    nullStdin = FileDescriptor(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!nullStdin.isOpen()) throwSystemError("open /dev/null");
  }
  Pipe stdoutPipe, stderrPipe;
  if (launch.capturesOutput) {
    stdoutPipe = makeOutputPipe();
    stderrPipe = makeOutputPipe();
  }
  std::vector<char*> argv = nullTerminated(launch.command);
  std::vector<char*> envp = nullTerminated(launch.environment);
  pid_t launcherPid = ::getpid();
  // Made before fork: the child only calls what is safe there.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int cpu : launch.cpus) CPU_SET(cpu, &cpus);

  pid_t pid = ::fork();
  if (pid < 0) throwSystemError("fork for rank " + std::to_string(launch.globalRank));
  if (pid == 0) {
    execRank(launch.globalRank, signals, launcherPid, launch.cpus.empty() ? nullptr : &cpus, nullStdin.get(),
             stdoutPipe.writeEnd.get(), stderrPipe.writeEnd.get(), argv.data(), envp.data());
  }
  return StartedRank{pid, std::move(stdoutPipe.readEnd), std::move(stderrPipe.readEnd)};
}

}  // namespace slimeccl::run
