#include "launcher_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace slimeccl::launcher_test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> launcherEnvironment(const std::map<std::string, std::string>& additions) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "SLIMECCL_", 9) != 0) environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : additions) environment.push_back(name + "=" + value);
  return environment;
}

std::vector<char*> nullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Reads what is available; returns false at end of file.
bool readAvailable(int fd, std::string& into) {
  char buffer[4096];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      into.append(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return true;
    fail("read launcher output");
  }
}

}  // namespace

std::vector<std::string> LauncherResult::outLines() const { return splitLines(out); }
std::vector<std::string> LauncherResult::errLines() const { return splitLines(err); }

std::string LauncherResult::describe() const {
  std::ostringstream text;
  text << "exit_code=" << exitCode << " killed_by_signal=" << killedBySignal << " elapsed=" << elapsed.count()
       << "s\n--- stdout ---\n"
       << out << "--- stderr ---\n"
       << err;
  return text.str();
}

LauncherProcess::LauncherProcess(const LauncherInput& input) {
  int inPipe[2], outPipe[2], errPipe[2];
  if (::pipe2(inPipe, O_CLOEXEC) != 0 || ::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0)
    fail("pipe2");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, inPipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);

  std::vector<std::string> argvStrings{SLIMECCL_RUN_PATH};
  argvStrings.insert(argvStrings.end(), input.arguments.begin(), input.arguments.end());
  std::vector<std::string> envStrings = launcherEnvironment(input.environment);
  std::vector<char*> argv = nullTerminated(argvStrings);
  std::vector<char*> envp = nullTerminated(envStrings);

  started_ = std::chrono::steady_clock::now();
  int spawnError = ::posix_spawn(&pid_, SLIMECCL_RUN_PATH, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(inPipe[0]);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (spawnError != 0) {
    errno = spawnError;
    fail("posix_spawn " SLIMECCL_RUN_PATH);
  }

  // Small inputs fit in the pipe buffer, so this does not block.
  ssize_t written = ::write(inPipe[1], input.stdinText.data(), input.stdinText.size());
  if (written != static_cast<ssize_t>(input.stdinText.size())) fail("write launcher stdin");
  ::close(inPipe[1]);

  outFd_ = outPipe[0];
  errFd_ = errPipe[0];
  if (::fcntl(outFd_, F_SETFL, O_NONBLOCK) != 0 || ::fcntl(errFd_, F_SETFL, O_NONBLOCK) != 0) fail("fcntl(O_NONBLOCK)");
}

LauncherProcess::~LauncherProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::close(outFd_);
  ::close(errFd_);
}

LauncherResult LauncherProcess::wait(std::chrono::seconds limit) {
  LauncherResult result;
  int waitStatus = 0;
  // Output is read until the launcher exits rather than until end of file:
  // ranks' leftover children may keep the pipes open.
  while (true) {
    pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
    if (::poll(fds, 2, 20) < 0 && errno != EINTR) fail("poll");
    readAvailable(outFd_, result.out);
    readAvailable(errFd_, result.err);
    pid_t done = ::waitpid(pid_, &waitStatus, WNOHANG);
    if (done < 0 && errno != EINTR) fail("waitpid");
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() - started_ > limit) ::kill(pid_, SIGKILL);
  }
  reaped_ = true;
  result.elapsed = std::chrono::steady_clock::now() - started_;
  readAvailable(outFd_, result.out);
  readAvailable(errFd_, result.err);
  if (WIFEXITED(waitStatus)) result.exitCode = WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) result.killedBySignal = WTERMSIG(waitStatus);
  return result;
}

LauncherResult runLauncher(const LauncherInput& input) { return LauncherProcess(input).wait(); }

LauncherResult runLauncher(const std::vector<std::string>& arguments) {
  return runLauncher(LauncherInput{arguments, {}, {}});
}

}  // namespace slimeccl::launcher_test
