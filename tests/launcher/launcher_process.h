// Runs the built slimeccl-run as a child process and collects what it did.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace slimeccl::launcher_test {

struct LauncherResult {
  int exitCode = -1;  // -1 when the launcher itself died of a signal
  int killedBySignal = 0;
  std::string out;
  std::string err;
  std::chrono::duration<double> elapsed{};

  std::vector<std::string> outLines() const;
  std::vector<std::string> errLines() const;
  // For assertion messages.
  std::string describe() const;
};

struct LauncherInput {
  std::vector<std::string> arguments;
  // Added to the test's environment, from which SLIMECCL_ variables are
  // removed so that the caller's setup cannot change the results.
  std::map<std::string, std::string> environment;
  std::string stdinText;
};

class LauncherProcess {
 public:
  explicit LauncherProcess(const LauncherInput& input);
  ~LauncherProcess();
  LauncherProcess(const LauncherProcess&) = delete;
  LauncherProcess& operator=(const LauncherProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Collects output until the launcher exits; kills it if it is still running
  // after `limit`, which then shows as killedBySignal == SIGKILL.
  LauncherResult wait(std::chrono::seconds limit = std::chrono::seconds(20));

 private:
  pid_t pid_ = -1;
  int outFd_ = -1;
  int errFd_ = -1;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point started_;
};

LauncherResult runLauncher(const LauncherInput& input);

// Convenience: runLauncher with just arguments.
LauncherResult runLauncher(const std::vector<std::string>& arguments);

}  // namespace slimeccl::launcher_test
