// AllReduce, ReduceScatter, Reduce, Broadcast, AlltoAll and AllGather with every algorithm forced
// by SLIMECCL_ALGO, and with the tuner's choice, on forked ranks over shm and over sockets and on
// threads: every datatype, op, root and placement, counts from empty to uneven, and large calls.
// One test is one launch; the calls of a sweep all run on its communicator. The large calls also
// check the route the last one took (slimecclCommGetLastOpRoute).
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "algorithm_case.h"
#include "collective_sweep.h"
#include "harness.h"

namespace slimeccl_test {
namespace {

constexpr std::initializer_list<Launch> kForkedLaunches = {Launch::kForkedShm, Launch::kForkedSocket};
constexpr std::initializer_list<int> kRankCounts = {1, 2, 3, 4, 5, 7, 8};

// AllGather's tuner choice is covered by allgather_test.cc.
bool sweepsTunerChoice(Collective collective) { return collective != Collective::kAllGather; }

std::vector<AlgorithmCase> sweepCases(Collective collective) {
  std::vector<AlgorithmCase> cases =
      algorithmCases(collective, sweepsTunerChoice(collective), kForkedLaunches, kRankCounts);
  for (const AlgorithmCase& threads :
       algorithmCases(collective, sweepsTunerChoice(collective), {Launch::kThreads}, {4}))
    cases.push_back(threads);
  return cases;
}

std::vector<AlgorithmCase> largeCases(Collective collective) {
  return algorithmCases(collective, sweepsTunerChoice(collective), kForkedLaunches, {3, 8});
}

class CollectiveSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(CollectiveSweep, EveryDatatypeOpCountRootAndPlacement) {
  const Collective collective = GetParam().collective;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [collective](int, slimecclComm_t comm) { runCalls(collective, comm, sweepCalls(collective, commSize(comm))); },
      algorithmOptions(GetParam()));
}

class CollectiveLarge : public ::testing::TestWithParam<AlgorithmCase> {};

// The last call, over 1 MiB, ran the forced algorithm over the net modules (too large for the
// shared slots): the route is checked, not only the data.
TEST_P(CollectiveLarge, OneMiBPlusOddBytesOutOfPlaceAndInPlace) {
  const AlgorithmCase param = GetParam();
  runRanks(
      param.launch, param.nranks,
      [param](int, slimecclComm_t comm) {
        runCalls(param.collective, comm, largeCalls(param.collective, commSize(comm)));
        checkRouteTaken(param, comm);
      },
      algorithmOptions(param));
}

INSTANTIATE_TEST_SUITE_P(AllReduce, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kAllReduce)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(ReduceScatter, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kReduceScatter)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(Reduce, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kReduce)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(Broadcast, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kBroadcast)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(AlltoAll, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kAlltoAll)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(AllGather, CollectiveSweep, ::testing::ValuesIn(sweepCases(Collective::kAllGather)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(AllReduce, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kAllReduce)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(ReduceScatter, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kReduceScatter)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(Reduce, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kReduce)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(Broadcast, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kBroadcast)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(AlltoAll, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kAlltoAll)),
                         algorithmCaseName);
INSTANTIATE_TEST_SUITE_P(AllGather, CollectiveLarge, ::testing::ValuesIn(largeCases(Collective::kAllGather)),
                         algorithmCaseName);

}  // namespace
}  // namespace slimeccl_test
