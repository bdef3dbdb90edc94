// slimecclCommSplit: ranks of a color ordered by key then parent rank, NOCOLOR, splits of
// splits, and AllGather on the resulting communicators; slimecclCommShrink, its ranks and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <functional>
#include <numeric>
#include <vector>

#include "allgather_buffers.h"
#include "harness.h"
#include "launch_case.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct SplitRule {
  std::function<int(int rank, int nranks)> color;
  std::function<int(int rank, int nranks)> key;
};

// Parent ranks of the caller's new communicator in new-rank order; empty for NOCOLOR.
std::vector<int> expectedMembers(int rank, int nranks, const SplitRule& rule) {
  const int color = rule.color(rank, nranks);
  if (color == SLIMECCL_SPLIT_NOCOLOR) return {};
  std::vector<int> members;
  for (int peer = 0; peer < nranks; ++peer) {
    if (rule.color(peer, nranks) == color) members.push_back(peer);
  }
  // Stable, so equal keys keep ascending parent-rank order.
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return rule.key(a, nranks) < rule.key(b, nranks); });
  return members;
}

void finalizeAndDestroy(slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclCommFinalize(comm), comm);
  RANK_CHECK_SUCCESS(slimecclCommDestroy(comm), nullptr);
}

// AllGather on `comm`, each rank contributing data named by its world rank; block j must hold
// the data of worldRanks[j].
void checkAllgather(slimecclComm_t comm, int worldRank, const std::vector<int>& worldRanks, uint64_t seed) {
  const int rank = commRank(comm);
  AllGatherBuffers buffers(rank, commSize(comm), 1031, slimecclInt32, false, seed, worldRank);
  withContext(buffers.describe(), [&] {
    RANK_CHECK_SUCCESS(
        slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(), buffers.datatype(), comm, nullptr),
        comm);
    buffers.verify(worldRanks);
  });
}

// Splits `parent` by `rule`, checks the new communicator's size, the caller's rank in it and an
// AllGather on it, and returns it (NULL for NOCOLOR). worldOf[r] is the world rank of parent rank r.
slimecclComm_t splitAndCheck(slimecclComm_t parent, const SplitRule& rule, const std::vector<int>& worldOf,
                             uint64_t seed) {
  const int rank = commRank(parent);
  const int nranks = commSize(parent);
  slimecclComm_t child = nullptr;
  RANK_CHECK_SUCCESS(slimecclCommSplit(parent, rule.color(rank, nranks), rule.key(rank, nranks), &child, nullptr),
                     parent);
  const std::vector<int> members = expectedMembers(rank, nranks, rule);
  if (members.empty()) {
    RANK_CHECK(child == nullptr, "a rank that splits with SLIMECCL_SPLIT_NOCOLOR must get a NULL communicator");
    return nullptr;
  }
  RANK_CHECK(child != nullptr, "slimecclCommSplit returned success but no communicator");
  const int expectedRank = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
  RANK_CHECK(commSize(child) == static_cast<int>(members.size()), "child has ", commSize(child), " ranks, expected ",
             members.size());
  RANK_CHECK(commRank(child) == expectedRank, "parent rank ", rank, " is child rank ", commRank(child), ", expected ",
             expectedRank);
  std::vector<int> memberWorldRanks;
  for (int member : members) memberWorldRanks.push_back(worldOf[member]);
  checkAllgather(child, worldOf[rank], memberWorldRanks, seed);
  return child;
}

std::vector<int> identity(int nranks) {
  std::vector<int> ranks(nranks);
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

const SplitRule kParityReversed{[](int rank, int) { return rank % 2; }, [](int rank, int) { return -rank; }};

class CommSplit : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(CommSplit, ParityColorsWithReversedKeys) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const std::vector<int> world = identity(commSize(comm));
    slimecclComm_t child = splitAndCheck(comm, kParityReversed, world, 1);
    finalizeAndDestroy(child);
    // The parent is unaffected by the split.
    checkAllgather(comm, rank, world, 2);
  });
}

TEST_P(CommSplit, TiedKeysFallBackToParentRank) {
  runRanks(GetParam().launch, GetParam().nranks, [](int, slimecclComm_t comm) {
    const SplitRule rule{[](int rank, int) { return rank % 3; }, [](int rank, int) { return rank % 2; }};
    finalizeAndDestroy(splitAndCheck(comm, rule, identity(commSize(comm)), 3));
  });
}

TEST_P(CommSplit, NoColorGivesNullButTheRankStillTakesPart) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const SplitRule rule{[](int r, int) { return r == 0 ? SLIMECCL_SPLIT_NOCOLOR : 3; }, [](int r, int) { return r; }};
    slimecclComm_t child = splitAndCheck(comm, rule, identity(commSize(comm)), 4);
    if (rank != 0) finalizeAndDestroy(child);
  });
}

TEST_P(CommSplit, SplitOfASplit) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    const std::vector<int> world = identity(nranks);
    slimecclComm_t child = splitAndCheck(comm, kParityReversed, world, 5);
    // World rank of each child rank, from the first split's ordering.
    const std::vector<int> childWorld = expectedMembers(rank, nranks, kParityReversed);
    const SplitRule halves{[](int r, int) { return r < 2 ? 0 : 1; }, [](int r, int) { return r; }};
    slimecclComm_t grandchild = splitAndCheck(child, halves, childWorld, 6);
    finalizeAndDestroy(grandchild);
    finalizeAndDestroy(child);
    checkAllgather(comm, rank, world, 7);
  });
}

// One rank's bad argument fails every rank's call at once with a sentence naming that rank,
// instead of leaving the others to wait out the timeout, and the parent stays usable.
TEST_P(CommSplit, OneRanksRefusedCallFailsEveryRankAtOnce) {
  RunOptions options;
  options.env["SLIMECCL_TIMEOUT_MS"] = "60000";
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        const int nranks = commSize(comm);
        const int refuser = nranks > 1 ? 1 : 0;
        slimecclComm_t child = nullptr;
        const auto start = std::chrono::steady_clock::now();
        const slimecclResult_t rc = slimecclCommSplit(comm, rank == refuser ? -5 : 0, rank, &child, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string text = lastErrorText(comm);
        RANK_CHECK(child == nullptr, "a failed split returned a communicator");
        if (rank == refuser) {
          RANK_CHECK(rc == slimecclInvalidArgument, "the refusing rank got ", rc, ": ", text);
          RANK_CHECK(text.find("color -5 is negative") != std::string::npos, "sentence: ", text);
        } else {
          RANK_CHECK(rc == slimecclInvalidUsage, "rank ", rank, " got ", rc, ": ", text);
          RANK_CHECK(text.find(concat("parent rank ", refuser, " refused its own call")) != std::string::npos,
                     "sentence: ", text);
        }
        RANK_CHECK(seconds < 20, "the split took ", seconds, " s to fail");
        checkAllgather(comm, rank, identity(nranks), 8);
      },
      options);
}

// The ranks that stay (all but rank 1 and the last; on 1 rank, all) form a comm in their old order;
// the excluded ranks do not call slimecclCommShrink, and every rank still uses the parent after.
TEST_P(CommSplit, ShrinkLeavesOutTheExcludedRanks) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    std::vector<int> excluded;
    if (nranks > 1) excluded.push_back(1);
    if (nranks > 2) excluded.push_back(nranks - 1);
    std::vector<int> survivors;
    for (int r = 0; r < nranks; ++r)
      if (std::find(excluded.begin(), excluded.end(), r) == excluded.end()) survivors.push_back(r);
    const auto mine = std::find(survivors.begin(), survivors.end(), rank);
    if (mine != survivors.end()) {
      slimecclComm_t shrunk = nullptr;
      RANK_CHECK_SUCCESS(slimecclCommShrink(comm, excluded.data(), static_cast<int>(excluded.size()), &shrunk, nullptr),
                         comm);
      RANK_CHECK(shrunk != nullptr, "slimecclCommShrink returned success but no communicator");
      RANK_CHECK(commSize(shrunk) == static_cast<int>(survivors.size()), "shrunk comm of ", commSize(shrunk), " ranks");
      RANK_CHECK(commRank(shrunk) == static_cast<int>(mine - survivors.begin()), "rank ", rank, " is ",
                 commRank(shrunk), " in the shrunk comm");
      checkAllgather(shrunk, rank, survivors, 9);
      finalizeAndDestroy(shrunk);
    }
    checkAllgather(comm, rank, identity(nranks), 10);
  });
}

// Each bad call is refused on the calling rank alone, with a sentence, and the parent stays usable.
TEST_P(CommSplit, ShrinkRefusesBadCalls) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    slimecclComm_t shrunk = nullptr;
    const auto refused = [&](slimecclResult_t expected, const std::string& words, const int* excluded, int count,
                             slimecclComm_t* out) {
      const slimecclResult_t rc = slimecclCommShrink(comm, excluded, count, out, nullptr);
      const std::string text = lastErrorText(comm);
      RANK_CHECK(rc == expected, "got ", rc, ": ", text);
      RANK_CHECK(text.find(words) != std::string::npos, "sentence: ", text);
    };
    refused(slimecclInvalidArgument, concat("excluded rank ", nranks, " is not a rank of the comm"), &nranks, 1,
            &shrunk);
    refused(slimecclInvalidUsage, "in its own list of excluded ranks", &rank, 1, &shrunk);
    refused(slimecclInvalidArgument, "newcomm is NULL", nullptr, 0, nullptr);
    refused(slimecclInvalidArgument, "the list of 2 excluded ranks is missing", nullptr, 2, &shrunk);
    RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
    refused(slimecclInvalidUsage, "called inside a group", nullptr, 0, &shrunk);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    RANK_CHECK(shrunk == nullptr, "a refused shrink returned a communicator");
    checkAllgather(comm, rank, identity(nranks), 11);
  });
}

// The first rank that stays cannot start the new comm's root (no such interface): the shrink fails
// with a sentence that names the rank and the call, and the parent stays usable.
TEST(CommShrinkRoot, ARootThatCannotStartIsNamedAndTheParentGoesOn) {
  runRanks(Launch::kForkedShm, 1, [](int rank, slimecclComm_t comm) {
    setenv("SLIMECCL_SOCKET_IFNAME", "=nosuchif0", 1);
    slimecclComm_t shrunk = nullptr;
    const slimecclResult_t rc = slimecclCommShrink(comm, nullptr, 0, &shrunk, nullptr);
    const std::string text = lastErrorText(comm);
    RANK_CHECK(rc != slimecclSuccess && shrunk == nullptr, "the shrink succeeded without a root");
    RANK_CHECK(text.find("rank 0: CommShrink: starting the new comm's bootstrap root: ") == 0, "sentence: ", text);
    RANK_CHECK(text.find("nosuchif0") != std::string::npos, "sentence: ", text);
    unsetenv("SLIMECCL_SOCKET_IFNAME");
    checkAllgather(comm, rank, identity(1), 12);
  });
}

std::vector<LaunchCase> splitCases() {
  std::vector<LaunchCase> cases = launchCases({Launch::kForkedShm, Launch::kThreads}, {1, 5, 8});
  cases.push_back({Launch::kForkedSocket, 4});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Launches, CommSplit, ::testing::ValuesIn(splitCases()), launchCaseName);

}  // namespace
}  // namespace slimeccl_test
