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

uint64_t matrix_seed(uint64_t call, int rank) { return call * 1000 + static_cast<uint64_t>(rank) + 1; }

void run_call(slimecclDataType_t datatype, const GemmShape& shape, Gathered gathered, bool on_stream, uint64_t call,
              int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream) {
  std::vector<std::vector<unsigned char>> a_blocks;
  for (int r = 0; r < nranks; ++r)
    a_blocks.push_back(random_matrix(datatype, shape.m_local, shape.k, matrix_seed(call, r)));
  const std::vector<unsigned char> b = random_matrix(datatype, shape.k, shape.n, matrix_seed(call, -1));
  const size_t a_block_bytes = a_blocks[rank].size();
  std::vector<unsigned char> a_gathered(a_block_bytes * nranks + 1, 0xee);
  std::vector<unsigned char> a_local = a_blocks[rank];
  const void* a = a_local.data();
  if (gathered == Gathered::kInPlace) {
    memcpy(a_gathered.data() + rank * a_block_bytes, a_local.data(), a_block_bytes);
    a = a_gathered.data() + rank * a_block_bytes;
  }
  std::vector<unsigned char> c(reference_c(datatype, shape, a_blocks, b).size() + 1, 0xee);
  RANK_CHECK_SUCCESS(
      slimecclAllGatherGemm(a, gathered == Gathered::kWorkspace ? nullptr : a_gathered.data(), b.data(), c.data(),
                            shape.m_local, shape.n, shape.k, datatype, comm, on_stream ? stream : nullptr),
      comm);
  if (on_stream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  // The library has set the BLAS thread count by now, so the reference runs under the same one.
  const std::vector<unsigned char> expected = reference_c(datatype, shape, a_blocks, b);
  RANK_CHECK(memcmp(c.data(), expected.data(), expected.size()) == 0, "C differs from the per-block BLAS reference");
  RANK_CHECK(c.back() == 0xee, "a byte past C was written");
  if (gathered != Gathered::kWorkspace)
    for (int r = 0; r < nranks; ++r)
      RANK_CHECK(memcmp(a_gathered.data() + r * a_block_bytes, a_blocks[r].data(), a_block_bytes) == 0, "block ", r,
                 " of the gathered A is wrong");
  RANK_CHECK(a_gathered.back() == 0xee, "a byte past the gathered A was written");
}

class AllGatherGemmSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(AllGatherGemmSweep, BitForBitWithThePerBlockReference) {
  run_ranks(
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
              const bool on_stream = ++call % 2 == 0;
              with_context(concat("AllGatherGemm ", shape.m_local, "x", shape.n, "x", shape.k, " of datatype ",
                                  static_cast<int>(datatype), ", gathered A ", static_cast<int>(gathered),
                                  on_stream ? ", on a stream" : ", blocking"),
                           [&] { run_call(datatype, shape, gathered, on_stream, call, rank, nranks, comm, stream); });
            }
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
      },
      algorithm_options(GetParam()));
}

// Every algorithm's blocks reach the callback in overlap_test.cc; here the tuner's choice and
// halving-doubling (Bruck for 3 ranks, which lands every block at the end).
std::vector<AlgorithmCase> gemm_cases() {
  std::vector<AlgorithmCase> cases;
  for (const char* algorithm : {kTunerChoice, "hd"})
    for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads})
      for (int nranks : {1, 2, 3, 4}) cases.push_back({Collective::kAllGather, algorithm, launch, nranks});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherGemmSweep, ::testing::ValuesIn(gemm_cases()), algorithm_case_name);

}  // namespace
}  // namespace slimeccl_test
