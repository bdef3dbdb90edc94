// --bind: local ranks on CPUs of their own, or left to the scheduler.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launcher_process.h"

namespace slimeccl::launcher_test {
namespace {

// Each rank prints "RANK CPUS" with the CPU list it may run on.
const std::vector<std::string> kPrintAffinity = {
    "sh", "-c", "echo $SLIMECCL_LOCAL_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"};

std::vector<std::string> launch(std::vector<std::string> arguments) {
  arguments.insert(arguments.end(), kPrintAffinity.begin(), kPrintAffinity.end());
  LauncherResult result = runLauncher(arguments);
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  std::vector<std::string> lines = result.outLines();
  std::sort(lines.begin(), lines.end());
  return lines;
}

int usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

// The i-th CPU this test may use, as /proc writes a single CPU.
std::string nthCpu(int n) {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set) && n-- == 0) return std::to_string(cpu);
  return "?";
}

std::string ownList() {
  LauncherResult result =
      runLauncher({"-n", "1", "--bind", "none", "sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"});
  return result.out.substr(0, result.out.find('\n'));
}

TEST(Binding, CoreGivesEachRankItsOwnCpuInTurn) {
  const int cpus = usableCpus();
  ASSERT_GE(cpus, 1);
  std::vector<std::string> lines = launch({"-n", std::to_string(cpus + 1), "--bind", "core"});
  ASSERT_EQ(lines.size(), static_cast<size_t>(cpus + 1));
  for (int rank = 0; rank <= cpus; ++rank)
    EXPECT_NE(std::find(lines.begin(), lines.end(), std::to_string(rank) + " " + nthCpu(rank % cpus)), lines.end())
        << "rank " << rank << " in " << ::testing::PrintToString(lines);
}

TEST(Binding, NoneLeavesEveryRankWhereTheLauncherMayRun) {
  std::vector<std::string> lines = launch({"-n", "2", "--bind", "none"});
  const std::string all = ownList();
  EXPECT_EQ(lines, (std::vector<std::string>{"0 " + all, "1 " + all}));
}

// The CPUs from the i-th on, `count` of them, as /proc writes a list ("0-3" or "5").
std::string cpuRange(int first, int count) {
  const std::string from = nthCpu(first), to = nthCpu(first + count - 1);
  return count == 1 ? from : from + "-" + to;
}

TEST(Binding, AutomaticGivesALoneRankEveryCpu) {
  EXPECT_EQ(launch({"-n", "1"}), (std::vector<std::string>{"0 " + ownList()}));
}

TEST(Binding, AutomaticGivesTwoRanksHalfTheCpusEach) {
  const int cpus = usableCpus();
  if (cpus < 4 || std::stoi(nthCpu(cpus - 1)) != std::stoi(nthCpu(0)) + cpus - 1)
    GTEST_SKIP() << "two blocks need four CPUs in a row, this test has " << cpus;
  const int first = cpus / 2;
  EXPECT_EQ(launch({"-n", "2"}),
            (std::vector<std::string>{"0 " + cpuRange(0, first), "1 " + cpuRange(first, cpus - first)}));
}

TEST(Binding, AutomaticBindsRoundRobinUpToTwoRanksPerCpu) {
  const int cpus = usableCpus();
  std::vector<std::string> fitting = launch({"-n", std::to_string(cpus)});
  ASSERT_EQ(fitting.size(), static_cast<size_t>(cpus));
  for (int rank = 0; rank < cpus; ++rank)
    EXPECT_NE(std::find(fitting.begin(), fitting.end(), std::to_string(rank) + " " + nthCpu(rank)), fitting.end())
        << "rank " << rank << " in " << ::testing::PrintToString(fitting);
  const int shared = 2 * cpus;
  std::vector<std::string> paired = launch({"-n", std::to_string(shared)});
  ASSERT_EQ(paired.size(), static_cast<size_t>(shared));
  for (int rank = 0; rank < shared; ++rank)
    EXPECT_NE(std::find(paired.begin(), paired.end(), std::to_string(rank) + " " + nthCpu(rank % cpus)), paired.end())
        << "rank " << rank << " in " << ::testing::PrintToString(paired);
  std::vector<std::string> crowded = launch({"-n", std::to_string(shared + 1)});
  const std::string all = ownList();
  for (const std::string& line : crowded) EXPECT_EQ(line.substr(line.find(' ') + 1), all) << line;
}

TEST(Binding, UnknownModeIsAUsageError) {
  LauncherResult result = runLauncher({"-n", "1", "--bind", "socket", "true"});
  EXPECT_EQ(result.exitCode, 2) << result.describe();
  EXPECT_NE(result.err.find("--bind expects none or core, got 'socket'"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace slimeccl::launcher_test
