// AllGatherGemm over forked ranks (shm, sockets) and threads, 1 to 4 ranks: float and double,
// shapes from 1 x 1 x 1 to odd sizes and empty K, with the gathered A in the communicator's
// workspace, in a caller's buffer, and in place; blocking and on a host stream. C must equal the
// per-block BLAS reference bit for bit, and a caller's gathered A must hold every rank's block.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "algorithm_case.h"
#include "gemm_reference.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

enum class Gathered { kWorkspace, kCallerBuffer, kInPlace };

const GemmShape kShapes[] = {{1, 1, 1}, {1, 7, 5}, {2, 9, 1},     {5, 33, 17},
                             {3, 4, 0}, {0, 6, 6}, {16, 65, 129}, {48, 40, 300}};

uint64_t matrixSeed(uint64_t call, int rank) { return call * 1000 + static_cast<uint64_t>(rank) + 1; }

void runCall(slimecclDataType_t datatype, const GemmShape& shape, Gathered gathered, bool onStream, uint64_t call,
             int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream) {
  std::vector<std::vector<unsigned char>> aBlocks;
  for (int r = 0; r < nranks; ++r)
    aBlocks.push_back(randomMatrix(datatype, shape.mLocal, shape.k, matrixSeed(call, r)));
  const std::vector<unsigned char> b = randomMatrix(datatype, shape.k, shape.n, matrixSeed(call, -1));
  const size_t aBlockBytes = aBlocks[rank].size();
  std::vector<unsigned char> aGathered(aBlockBytes * nranks + 1, 0xee);
  std::vector<unsigned char> aLocal = aBlocks[rank];
  const void* a = aLocal.data();
  if (gathered == Gathered::kInPlace) {
    memcpy(aGathered.data() + rank * aBlockBytes, aLocal.data(), aBlockBytes);
    a = aGathered.data() + rank * aBlockBytes;
  }
  std::vector<unsigned char> c(referenceC(datatype, shape, aBlocks, b).size() + 1, 0xee);
  RANK_CHECK_SUCCESS(
      slimecclAllGatherGemm(a, gathered == Gathered::kWorkspace ? nullptr : aGathered.data(), b.data(), c.data(),
                            shape.mLocal, shape.n, shape.k, datatype, comm, onStream ? stream : nullptr),
      comm);
  if (onStream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  // The library has set the BLAS thread count by now, so the reference runs under the same one.
  const std::vector<unsigned char> expected = referenceC(datatype, shape, aBlocks, b);
  RANK_CHECK(memcmp(c.data(), expected.data(), expected.size()) == 0, "C differs from the per-block BLAS reference");
  RANK_CHECK(c.back() == 0xee, "a byte past C was written");
  if (gathered != Gathered::kWorkspace)
    for (int r = 0; r < nranks; ++r)
      RANK_CHECK(memcmp(aGathered.data() + r * aBlockBytes, aBlocks[r].data(), aBlockBytes) == 0, "block ", r,
                 " of the gathered A is wrong");
  RANK_CHECK(aGathered.back() == 0xee, "a byte past the gathered A was written");
}

class AllGatherGemmSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(AllGatherGemmSweep, BitForBitWithThePerBlockReference) {
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        int nranks = 0;
        RANK_CHECK_SUCCESS(slimecclCommCount(comm, &nranks), comm);
        slimecclStream_t stream = nullptr;
        RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
        uint64_t call = 0;
        for (slimecclDataType_t datatype : {slimecclFloat32, slimecclFloat64})
          for (const GemmShape& shape : kShapes)
            for (Gathered gathered : {Gathered::kWorkspace, Gathered::kCallerBuffer, Gathered::kInPlace}) {
              const bool onStream = ++call % 2 == 0;
              withContext(concat("AllGatherGemm ", shape.mLocal, "x", shape.n, "x", shape.k, " of datatype ",
                                 static_cast<int>(datatype), ", gathered A ", static_cast<int>(gathered),
                                 onStream ? ", on a stream" : ", blocking"),
                          [&] { runCall(datatype, shape, gathered, onStream, call, rank, nranks, comm, stream); });
            }
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
      },
      algorithmOptions(GetParam()));
}

// Every algorithm's blocks reach the callback in overlap_test.cc; here the tuner's choice and
// halving-doubling (Bruck for 3 ranks, which lands every block at the end).
std::vector<AlgorithmCase> gemmCases() {
  std::vector<AlgorithmCase> cases;
  for (const char* algorithm : {kTunerChoice, "hd"})
    for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads})
      for (int nranks : {1, 2, 3, 4}) cases.push_back({Collective::kAllGather, algorithm, launch, nranks});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherGemmSweep, ::testing::ValuesIn(gemmCases()), algorithmCaseName);

}  // namespace
}  // namespace slimeccl_test
