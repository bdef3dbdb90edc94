// How the launcher reacts to ranks that fail, die, hang or cannot start.

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <regex>
#include <string>

#include "launcher_process.h"
#include "scratch_directory.h"

namespace slimeccl::launcher_test {
namespace {

using std::chrono::duration;

TEST(RankFailure, AllRanksSucceedingGivesZero) {
  LauncherResult result = runLauncher({"-n", "3", "sh", "-c", "exit 0"});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(result.err, "");
}

TEST(RankFailure, FailingStatusPropagatesAndOtherRanksAreStoppedQuickly) {
  LauncherResult result =
      runLauncher({"-n", "3", "sh", "-c", "if [ \"$SLIMECCL_RANK\" = 1 ]; then exit 3; fi; exec sleep 30"});

  EXPECT_EQ(result.exitCode, 3) << result.describe();
  EXPECT_LT(result.elapsed, duration<double>(2.5)) << result.describe();
  EXPECT_TRUE(std::regex_search(
      result.err, std::regex(R"(slimeccl-run: rank 1 \(pid \d+\) exited with status 3; stopping the other ranks\n)")))
      << result.describe();
  EXPECT_EQ(result.errLines().size(), 1u) << "the ranks stopped by the launcher must not be reported\n"
                                          << result.describe();
}

TEST(RankFailure, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  LauncherResult result =
      runLauncher({"-n", "2", "sh", "-c",
                   "if [ \"$SLIMECCL_RANK\" = 0 ]; then sleep 0.2; exit 5; fi; trap '' TERM; exec sleep 30"});

  EXPECT_EQ(result.exitCode, 5) << result.describe();
  EXPECT_GE(result.elapsed, duration<double>(3.0)) << result.describe();
  EXPECT_LT(result.elapsed, duration<double>(8.0)) << result.describe();
  EXPECT_NE(result.err.find("sending SIGKILL"), std::string::npos) << result.describe();
}

TEST(RankFailure, SignalDeathGives128PlusSignal) {
  LauncherResult result =
      runLauncher({"-n", "2", "sh", "-c", "if [ \"$SLIMECCL_RANK\" = 1 ]; then kill -KILL $$; fi; exec sleep 30"});

  EXPECT_EQ(result.exitCode, 128 + SIGKILL) << result.describe();
  EXPECT_LT(result.elapsed, duration<double>(2.5)) << result.describe();
  EXPECT_TRUE(std::regex_search(result.err, std::regex(R"(rank 1 \(pid \d+\) was killed by signal 9\b)")))
      << result.describe();
}

TEST(RankFailure, MissingCommandExitsWith127NamingTheCommand) {
  LauncherResult result = runLauncher({"-n", "2", "/nonexistent/slimeccl-test-command", "arg"});

  EXPECT_EQ(result.exitCode, 127) << result.describe();
  EXPECT_NE(result.err.find("cannot execute '/nonexistent/slimeccl-test-command'"), std::string::npos)
      << result.describe();
  EXPECT_NE(result.err.find("exited with status 127"), std::string::npos) << result.describe();
}

TEST(RankFailure, CommandWithoutExecutePermissionExitsWith127) {
  ScratchDirectory scratch;
  std::ofstream(scratch.file("not-executable")) << "#!/bin/sh\nexit 0\n";
  std::string command = scratch.file("not-executable").string();

  LauncherResult result = runLauncher({"-n", "1", command});

  EXPECT_EQ(result.exitCode, 127) << result.describe();
  EXPECT_NE(result.err.find("cannot execute '" + command + "': Permission denied"), std::string::npos)
      << result.describe();
}

TEST(Timeout, HangingRanksAreStoppedWithStatus124) {
  LauncherResult result = runLauncher({"-n", "2", "--timeout", "1", "sleep", "30"});

  EXPECT_EQ(result.exitCode, 124) << result.describe();
  EXPECT_GE(result.elapsed, duration<double>(1.0)) << result.describe();
  EXPECT_LT(result.elapsed, duration<double>(3.0)) << result.describe();
  EXPECT_NE(result.err.find("timeout of 1 s expired"), std::string::npos) << result.describe();
}

TEST(Timeout, RanksFinishingInTimeAreNotAffected) {
  LauncherResult result = runLauncher({"-n", "2", "--timeout", "20", "sh", "-c", "exit 0"});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_LT(result.elapsed, duration<double>(2.0)) << result.describe();
}

}  // namespace
}  // namespace slimeccl::launcher_test
