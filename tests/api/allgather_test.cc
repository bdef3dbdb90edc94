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

std::vector<Shape> sweepShapes() {
  std::vector<Shape> shapes;
  for (slimecclDataType_t datatype : kAllDatatypes) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{13}, 4096 / datatypeSize(datatype)})
      shapes.push_back({datatype, count});
  }
  // One large odd-sized block, so chunking and any tail handling are exercised.
  shapes.push_back({slimecclInt8, (size_t{1} << 20) + 7});
  return shapes;
}

class AllGatherSweep : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(AllGatherSweep, EveryDatatypeAndSizeOutOfPlaceAndInPlace) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    RANK_CHECK(commRank(comm) == rank, "slimecclCommUserRank says ", commRank(comm));
    uint64_t seed = 0;
    for (const Shape& shape : sweepShapes()) {
      for (bool inPlace : {false, true}) {
        AllGatherBuffers buffers(rank, nranks, shape.count, shape.datatype, inPlace, ++seed);
        withContext(buffers.describe(), [&] {
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
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {16})),
                         launchCaseName);

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherSweep,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads,
                                                          Launch::kThreadsInitAll},
                                                         {1, 2, 3, 4, 5, 7, 8})),
                         launchCaseName);

class AllGatherLarge : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(AllGatherLarge, SixteenMiBPlusOddPerRankOutOfPlaceAndInPlace) {
  constexpr size_t kCount = (size_t{16} << 20) + 3;
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    uint64_t seed = 100;
    for (bool inPlace : {false, true}) {
      AllGatherBuffers buffers(rank, nranks, kCount, slimecclUint8, inPlace, ++seed);
      withContext(buffers.describe(), [&] {
        RANK_CHECK_SUCCESS(slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                             buffers.datatype(), comm, nullptr),
                           comm);
        buffers.verify();
      });
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherLarge,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {4})),
                         launchCaseName);

}  // namespace
}  // namespace slimeccl_test
