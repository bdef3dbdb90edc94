// Signals sent to the launcher reach every rank.

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "launcher_process.h"
#include "scratch_directory.h"

namespace slimeccl::launcher_test {
namespace {

constexpr int kRanks = 3;

// Each rank records the signals it receives in files named after them and
// after its rank, and exits 0 on SIGTERM. $0 is the scratch directory.
const std::string kRecordSignals =
    "trap 'echo usr1 > \"$0/usr1.$SLIMECCL_RANK\"' USR1; "
    "trap 'echo term > \"$0/term.$SLIMECCL_RANK\"; exit 0' TERM; "
    "touch \"$0/ready.$SLIMECCL_RANK\"; "
    "while :; do sleep 0.05; done";

// Waits until every rank created its file PREFIX.RANK.
bool waitForFiles(const ScratchDirectory& scratch, const std::string& prefix, int ranks) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    bool allPresent = true;
    for (int rank = 0; rank < ranks; ++rank)
      allPresent = allPresent && std::filesystem::exists(scratch.file(prefix + std::to_string(rank)));
    if (allPresent) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(SignalForwarding, SignalsReachEveryRank) {
  ScratchDirectory scratch;
  LauncherProcess launcher(
      LauncherInput{{"-n", std::to_string(kRanks), "sh", "-c", kRecordSignals, scratch.path().string()}, {}, {}});
  ASSERT_TRUE(waitForFiles(scratch, "ready.", kRanks)) << "ranks did not start";

  ASSERT_EQ(::kill(launcher.pid(), SIGUSR1), 0);
  EXPECT_TRUE(waitForFiles(scratch, "usr1.", kRanks)) << "SIGUSR1 did not reach every rank";

  ASSERT_EQ(::kill(launcher.pid(), SIGTERM), 0);
  LauncherResult result = launcher.wait();

  // The ranks handled SIGTERM and exited 0, so the launcher does too.
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_LT(result.elapsed, std::chrono::duration<double>(5.0)) << result.describe();
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(scratch.read("usr1." + std::to_string(rank)), "usr1\n") << "rank " << rank;
    EXPECT_EQ(scratch.read("term." + std::to_string(rank)), "term\n") << "rank " << rank;
  }
}

TEST(SignalForwarding, RanksKilledByAForwardedSignalGive128PlusSignal) {
  ScratchDirectory scratch;
  LauncherProcess launcher(LauncherInput{
      {"-n", "2", "sh", "-c", "touch \"$0/ready.$SLIMECCL_RANK\"; exec sleep 30", scratch.path().string()}, {}, {}});
  ASSERT_TRUE(waitForFiles(scratch, "ready.", 2)) << "ranks did not start";

  ASSERT_EQ(::kill(launcher.pid(), SIGINT), 0);
  LauncherResult result = launcher.wait();

  EXPECT_EQ(result.exitCode, 128 + SIGINT) << result.describe();
  EXPECT_LT(result.elapsed, std::chrono::duration<double>(5.0)) << result.describe();
}

}  // namespace
}  // namespace slimeccl::launcher_test
