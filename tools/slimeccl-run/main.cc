// slimeccl-run: starts the local ranks of a slimeccl job. See usageText().

#include <cerrno>
#include <cstdio>
#include <exception>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

#include "command_line.h"
#include "src/base/util/version_line.h"
#include "rank_supervisor.h"
#include "rendezvous.h"
#include "system_error.h"

namespace {

constexpr int kUsageErrorStatus = 2;
constexpr int kLauncherErrorStatus = 1;

// Opens /dev/null on any closed standard descriptor, so that pipes and files
// opened later never take numbers 0-2 and get confused with the ranks' stdio.
void ensureStandardDescriptorsOpen() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (opened < 0) slimeccl::run::throwSystemError("open /dev/null");
  }
}

int launch(const slimeccl::run::LaunchOptions& options) {
  ensureStandardDescriptorsOpen();
  slimeccl::run::Rendezvous rendezvous = slimeccl::run::chooseRendezvous(options);
  slimeccl::run::RankSupervisor supervisor(options, rendezvous);
  return supervisor.run();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  slimeccl::run::ParsedCommandLine parsed = slimeccl::run::parseCommandLine(arguments);

  if (std::holds_alternative<slimeccl::run::HelpRequested>(parsed)) {
    std::fputs(slimeccl::run::usageText().c_str(), stdout);
    return 0;
  }
  if (std::holds_alternative<slimeccl::run::VersionRequested>(parsed)) {
    std::fputs(slimeccl::versionLine("slimeccl-run").c_str(), stdout);
    return 0;
  }
  if (const auto* error = std::get_if<slimeccl::run::UsageError>(&parsed)) {
    std::fprintf(stderr, "slimeccl-run: error: %s\nTry 'slimeccl-run --help' for usage.\n", error->message.c_str());
    return kUsageErrorStatus;
  }
  try {
    return launch(std::get<slimeccl::run::LaunchOptions>(parsed));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "slimeccl-run: %s\n", error.what());
    return kLauncherErrorStatus;
  }
}
