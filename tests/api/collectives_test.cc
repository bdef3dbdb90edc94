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
bool sweeps_tuner_choice(Collective collective) { return collective != Collective::kAllGather; }

std::vector<AlgorithmCase> sweep_cases(Collective collective) {
  std::vector<AlgorithmCase> cases =
      algorithm_cases(collective, sweeps_tuner_choice(collective), kForkedLaunches, kRankCounts);
  for (const AlgorithmCase& threads :
       algorithm_cases(collective, sweeps_tuner_choice(collective), {Launch::kThreads}, {4}))
    cases.push_back(threads);
  return cases;
}

std::vector<AlgorithmCase> large_cases(Collective collective) {
  return algorithm_cases(collective, sweeps_tuner_choice(collective), kForkedLaunches, {3, 8});
}

class CollectiveSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(CollectiveSweep, EveryDatatypeOpCountRootAndPlacement) {
  const Collective collective = GetParam().collective;
  run_ranks(
      GetParam().launch, GetParam().nranks,
      [collective](int, slimecclComm_t comm) { run_calls(collective, comm, sweep_calls(collective, comm_size(comm))); },
      algorithm_options(GetParam()));
}

class CollectiveLarge : public ::testing::TestWithParam<AlgorithmCase> {};

// The last call, over 1 MiB, ran the forced algorithm over the net modules (too large for the
// shared slots): the route is checked, not only the data.
TEST_P(CollectiveLarge, OneMiBPlusOddBytesOutOfPlaceAndInPlace) {
  const AlgorithmCase param = GetParam();
  run_ranks(
      param.launch, param.nranks,
      [param](int, slimecclComm_t comm) {
        run_calls(param.collective, comm, large_calls(param.collective, comm_size(comm)));
        check_route_taken(param, comm);
      },
      algorithm_options(param));
}

INSTANTIATE_TEST_SUITE_P(AllReduce, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kAllReduce)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(ReduceScatter, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kReduceScatter)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(Reduce, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kReduce)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(Broadcast, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kBroadcast)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(AlltoAll, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kAlltoAll)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(AllGather, CollectiveSweep, ::testing::ValuesIn(sweep_cases(Collective::kAllGather)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(AllReduce, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kAllReduce)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(ReduceScatter, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kReduceScatter)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(Reduce, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kReduce)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(Broadcast, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kBroadcast)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(AlltoAll, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kAlltoAll)),
                         algorithm_case_name);
INSTANTIATE_TEST_SUITE_P(AllGather, CollectiveLarge, ::testing::ValuesIn(large_cases(Collective::kAllGather)),
                         algorithm_case_name);

}  // namespace
}  // namespace slimeccl_test
