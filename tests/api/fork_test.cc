// Forks around the library. Ranks forked by the process that made the unique id, as Python's
// multiprocessing with fork and many launchers start them: the id's root thread lives in that
// process only, and the forked ranks must not wait for a copy of it (they waited 5 s at every
// init); each rank's init must take well under a second, with SLIMECCL_TIMEOUT_MS at 2 s. And a
// child forked from a process that holds communicators: it may not use them, and it can make new
// ones, while the parent's go on working.
#include <gtest/gtest.h>
#include <slimeccl.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "rank_check.h"

namespace slimeccl_test {
namespace {

constexpr double kInitBoundSeconds = 1.0;

// Rank `rank`'s whole life: init (timed), an AllGather checked, destroy. The exit code says how it
// went (0, or 1 with a line on stderr); the init's seconds go to `report`.
int liveRank(int rank, int nranks, const slimecclUniqueId& id, int report) {
  const auto start = std::chrono::steady_clock::now();
  slimecclComm_t comm = nullptr;
  const slimecclResult_t made = slimecclCommInitRank(&comm, nranks, id, rank);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (write(report, &seconds, sizeof(seconds)) != sizeof(seconds)) return 1;
  if (made != slimecclSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, slimecclGetLastError(nullptr));
    return 1;
  }
  std::vector<int> gathered(static_cast<size_t>(nranks), -1);
  const int mine = rank * 7;
  const bool ok = slimecclAllGather(&mine, gathered.data(), 1, slimecclInt32, comm, nullptr) == slimecclSuccess;
  bool right = ok;
  for (int r = 0; r < nranks; ++r) right = right && gathered[static_cast<size_t>(r)] == r * 7;
  if (!right) fprintf(stderr, "rank %d: AllGather %s\n", rank, ok ? "gave wrong values" : slimecclGetLastError(comm));
  return slimecclCommDestroy(comm) == slimecclSuccess && right ? 0 : 1;
}

// This process makes the id, then forks ranks `first` to nranks - 1; with first = 1 it is rank 0
// itself. Expects every rank to succeed and to init within the bound.
void forkRanksAfterTheId(int nranks, int first) {
  setenv("SLIMECCL_TIMEOUT_MS", "2000", 1);
  slimecclUniqueId id;
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  int report[2];
  ASSERT_EQ(0, pipe(report));
  std::vector<pid_t> children;
  for (int rank = first; rank < nranks; ++rank) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(30);  // a rank that hangs is killed, and the parent's wait ends
      close(report[0]);
      _exit(liveRank(rank, nranks, id, report[1]));
    }
    children.push_back(pid);
  }
  int failed = first == 1 ? liveRank(0, nranks, id, report[1]) : 0;
  close(report[1]);
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  EXPECT_EQ(0, failed) << failed << " of " << nranks << " ranks failed (their lines are on stderr)";
  double seconds = 0;
  int reported = 0;
  while (read(report[0], &seconds, sizeof(seconds)) == sizeof(seconds)) {
    ++reported;
    EXPECT_LT(seconds, kInitBoundSeconds) << "a rank's init took " << seconds << " s";
  }
  close(report[0]);
  EXPECT_EQ(nranks, reported);
}

class ForkAfterUniqueId : public ::testing::TestWithParam<int> {};

TEST_P(ForkAfterUniqueId, ParentThatIsNoRankForksEveryRank) { forkRanksAfterTheId(GetParam(), 0); }

TEST_P(ForkAfterUniqueId, RankZeroForksTheOthers) { forkRanksAfterTheId(GetParam(), 1); }

// A forked child's calls on its parent's comm are refused with a sentence; then it makes a comm of
// its own with the other child.
int forkedChild(int rank, slimecclComm_t parents, slimecclStream_t parentsStream, const slimecclUniqueId& id) {
  // The parent's stream has no worker here, and the parent's comm's sentence is not read through
  // its (possibly held) mutex.
  if (slimecclStreamSynchronize(parentsStream) != slimecclInvalidArgument) {
    fprintf(stderr, "child %d: the parent's stream was taken\n", rank);
    return 1;
  }
  int value = rank, gathered[2] = {-1, -1};
  const slimecclResult_t used = slimecclAllGather(&value, gathered, 1, slimecclInt32, parents, nullptr);
  const std::string why = slimecclGetLastError(nullptr);
  if (used != slimecclInvalidUsage ||
      why.find("a forked child cannot use its parent's communicators") == std::string::npos) {
    fprintf(stderr, "child %d: AllGather on the parent's comm gave %d: %s\n", rank, static_cast<int>(used),
            why.c_str());
    return 1;
  }
  if (std::string(slimecclGetLastError(parents)).empty()) {
    fprintf(stderr, "child %d: no sentence for the parent's comm\n", rank);
    return 1;
  }
  if (slimecclCommDestroy(parents) != slimecclInvalidUsage) {
    fprintf(stderr, "child %d: destroying the parent's comm was not refused\n", rank);
    return 1;
  }
  slimecclComm_t mine = nullptr;
  if (slimecclCommInitRank(&mine, 2, id, rank) != slimecclSuccess ||
      slimecclAllGather(&value, gathered, 1, slimecclInt32, mine, nullptr) != slimecclSuccess) {
    fprintf(stderr, "child %d: its own comm failed: %s\n", rank, slimecclGetLastError(nullptr));
    return 1;
  }
  const bool right = gathered[0] == 0 && gathered[1] == 1;
  if (!right) fprintf(stderr, "child %d: gathered %d %d\n", rank, gathered[0], gathered[1]);
  return slimecclCommDestroy(mine) == slimecclSuccess && right ? 0 : 1;
}

TEST(ForkedChild, CannotUseItsParentsCommsButMakesItsOwn) {
  setenv("SLIMECCL_TIMEOUT_MS", "10000", 1);
  slimecclComm_t parents[2] = {nullptr, nullptr};
  ASSERT_EQ(slimecclSuccess, slimecclCommInitAll(parents, 2, nullptr)) << lastErrorText(nullptr);
  slimecclUniqueId id;
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  slimecclStream_t stream = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclStreamCreate(&stream));
  std::vector<pid_t> children;
  for (int rank = 0; rank < 2; ++rank) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(30);
      _exit(forkedChild(rank, parents[rank], stream, id));
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child failed (its line is on stderr)";
  }
  // The parent's comms still work.
  int values[2] = {5, 6}, gathered[2][2] = {{-1, -1}, {-1, -1}};
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(slimecclSuccess,
              slimecclAllGather(&values[rank], gathered[rank], 1, slimecclInt32, parents[rank], nullptr));
  ASSERT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(nullptr);
  EXPECT_EQ(slimecclSuccess, slimecclStreamSynchronize(stream));
  EXPECT_EQ(slimecclSuccess, slimecclStreamDestroy(stream));
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(5, gathered[rank][0]);
    EXPECT_EQ(6, gathered[rank][1]);
    EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(parents[rank]));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ForkAfterUniqueId, ::testing::Values(2, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

}  // namespace
}  // namespace slimeccl_test
