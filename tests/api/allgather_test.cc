// AllGather across launches and rank counts: every datatype, sizes from empty to 1 MiB + 7
// bytes, out of place and in place, every element and the guard bytes checked; plus a few
// runs with 16 MiB blocks.
#include <gtest/gtest.h>

#include <vector>

#include "allgather_buffers.h"
#include "harness.h"
#include "launch_case.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct Shape {
  slimecclDataType_t datatype;
  size_t count;
};

std::vector<Shape> sweep_shapes() {
  std::vector<Shape> shapes;
  for (slimecclDataType_t datatype : kAllDatatypes) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{13}, 4096 / datatype_size(datatype)})
      shapes.push_back({datatype, count});
  }
  // One large odd-sized block, so chunking and any tail handling are exercised.
  shapes.push_back({slimecclInt8, (size_t{1} << 20) + 7});
  return shapes;
}

class AllGatherSweep : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(AllGatherSweep, EveryDatatypeAndSizeOutOfPlaceAndInPlace) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    RANK_CHECK(comm_rank(comm) == rank, "slimecclCommUserRank says ", comm_rank(comm));
    uint64_t seed = 0;
    for (const Shape& shape : sweep_shapes()) {
      for (bool in_place : {false, true}) {
        AllGatherBuffers buffers(rank, nranks, shape.count, shape.datatype, in_place, ++seed);
        with_context(buffers.describe(), [&] {
          RANK_CHECK_SUCCESS(slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                               buffers.datatype(), comm, nullptr),
                             comm);
          buffers.verify();
        });
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(ManyRanks, AllGatherSweep,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                          {16})),
                         launch_case_name);

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherSweep,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads,
                                                           Launch::kThreadsInitAll},
                                                          {1, 2, 3, 4, 5, 7, 8})),
                         launch_case_name);

class AllGatherLarge : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(AllGatherLarge, SixteenMiBPlusOddPerRankOutOfPlaceAndInPlace) {
  constexpr size_t kCount = (size_t{16} << 20) + 3;
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    uint64_t seed = 100;
    for (bool in_place : {false, true}) {
      AllGatherBuffers buffers(rank, nranks, kCount, slimecclUint8, in_place, ++seed);
      with_context(buffers.describe(), [&] {
        RANK_CHECK_SUCCESS(slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                             buffers.datatype(), comm, nullptr),
                           comm);
        buffers.verify();
      });
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherLarge,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                          {4})),
                         launch_case_name);

}  // namespace
}  // namespace slimeccl_test
