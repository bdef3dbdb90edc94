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
  FileDescriptor read_end;
  FileDescriptor write_end;
};

Pipe makeOutputPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throwSystemError("pipe2");
  Pipe made{FileDescriptor(fds[0]), FileDescriptor(fds[1])};
  if (::fcntl(made.read_end.get(), F_SETFL, O_NONBLOCK) != 0) throwSystemError("fcntl(O_NONBLOCK)");
  return made;
}

std::vector<char*> nullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

[[noreturn]] void failInChild(int global_rank, const char* what) {
  ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: %s: %s\n", global_rank, what, std::strerror(errno));
  ::_exit(127);
}

// Runs in the forked child; everything it needs was prepared before fork.
[[noreturn]] void execRank(int global_rank, const SignalChannel& signals, pid_t launcher_pid, const cpu_set_t* cpus,
                           int stdin_fd, int stdout_fd, int stderr_fd, char* const* argv, char* const* envp) {
  if (!signals.restoreInChild()) failInChild(global_rank, "cannot restore signal settings");
  // A rank whose launcher died (even by SIGKILL) would otherwise wait forever
  // for peers that are never coming.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) failInChild(global_rank, "prctl(PR_SET_PDEATHSIG)");
  if (::getppid() != launcher_pid) ::_exit(128 + SIGTERM);
  // Unbound is slower, not wrong: say so and go on.
  if (cpus != nullptr && ::sched_setaffinity(0, sizeof(*cpus), cpus) != 0)
    ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: cannot bind to its CPUs: %s\n", global_rank, std::strerror(errno));
  if (stdin_fd >= 0 && ::dup2(stdin_fd, STDIN_FILENO) < 0) failInChild(global_rank, "cannot redirect stdin");
  if (stdout_fd >= 0 && ::dup2(stdout_fd, STDOUT_FILENO) < 0) failInChild(global_rank, "cannot redirect stdout");
  if (stderr_fd >= 0 && ::dup2(stderr_fd, STDERR_FILENO) < 0) failInChild(global_rank, "cannot redirect stderr");
  ::execvpe(argv[0], argv, envp);
  ::dprintf(STDERR_FILENO, "slimeccl-run: rank %d: cannot execute '%s': %s\n", global_rank, argv[0],
            std::strerror(errno));
  ::_exit(127);
}

}  // namespace

StartedRank startRank(const RankLaunch& launch, const SignalChannel& signals) {
  FileDescriptor null_stdin;
  if (!launch.reads_stdin) {
    null_stdin = FileDescriptor(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_stdin.isOpen()) throwSystemError("open /dev/null");
  }
  Pipe stdout_pipe, stderr_pipe;
  if (launch.captures_output) {
    stdout_pipe = makeOutputPipe();
    stderr_pipe = makeOutputPipe();
  }
  std::vector<char*> argv = nullTerminated(launch.command);
  std::vector<char*> envp = nullTerminated(launch.environment);
  pid_t launcher_pid = ::getpid();
  // Made before fork: the child only calls what is safe there.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int cpu : launch.cpus) CPU_SET(cpu, &cpus);

  pid_t pid = ::fork();
  if (pid < 0) throwSystemError("fork for rank " + std::to_string(launch.global_rank));
  if (pid == 0) {
    execRank(launch.global_rank, signals, launcher_pid, launch.cpus.empty() ? nullptr : &cpus, null_stdin.get(),
             stdout_pipe.write_end.get(), stderr_pipe.write_end.get(), argv.data(), envp.data());
  }
  return StartedRank{pid, std::move(stdout_pipe.read_end), std::move(stderr_pipe.read_end)};
}

}  // namespace slimeccl::run
