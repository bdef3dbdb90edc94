// GemmReduceScatter on host buffers over forked ranks (shm, sockets) and threads, 1 to 4 ranks:
// float and double, sum, max and min, shapes from 1 x 1 x 1 to odd sizes and empty K, blocking and
// on a host stream. Every rank's A and B hold small integers, so every partial product and every
// reduction is exact in both types, and C must equal the integer reference bit for bit whatever
// the order of the sums. And the refusals: C overlapping A or B, a type without a host GEMM.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "algorithm_case.h"
#include "integer_products.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct Shape {
  size_t mLocal, n, k;
};

const Shape kShapes[] = {{1, 1, 1}, {1, 7, 5}, {2, 9, 1}, {5, 33, 17}, {3, 4, 0}, {16, 65, 129}, {48, 40, 300}};

// Integers in [-3, 3], rows x columns, from (seed, rank).
std::vector<long> integerMatrix(size_t rows, size_t columns, uint64_t seed, int rank) {
  std::mt19937_64 engine(seed * 131 + static_cast<uint64_t>(rank));
  std::uniform_int_distribution<int> value(-3, 3);
  std::vector<long> m(rows * columns);
  for (long& v : m) v = value(engine);
  return m;
}

template <typename T>
std::vector<T> as(const std::vector<long>& m) {
  return std::vector<T>(m.begin(), m.end());
}

// Rank `rank`'s rows of op over ranks of (A_q x B_q), in integers.
std::vector<long> expectedC(const Shape& s, int rank, int nranks, slimecclRedOp_t op, uint64_t seed) {
  return reducedProductRows(
      ProductShape{s.mLocal, s.k, s.n}, rank, nranks, op,
      [&](int q) { return integerMatrix(nranks * s.mLocal, s.k, seed, q); },
      [&](int q) { return integerMatrix(s.k, s.n, seed + 1, q); });
}

template <typename T>
void runCall(const Shape& s, slimecclRedOp_t op, bool onStream, uint64_t seed, int rank, int nranks,
             slimecclComm_t comm, slimecclStream_t stream, slimecclDataType_t datatype) {
  const std::vector<T> a = as<T>(integerMatrix(nranks * s.mLocal, s.k, seed, rank));
  const std::vector<T> b = as<T>(integerMatrix(s.k, s.n, seed + 1, rank));
  std::vector<T> c(s.mLocal * s.n + 1, T(-12345));
  RANK_CHECK_SUCCESS(slimecclGemmReduceScatter(a.data(), b.data(), c.data(), s.mLocal, s.n, s.k, datatype, op, comm,
                                               onStream ? stream : nullptr),
                     comm);
  if (onStream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  const std::vector<T> want = as<T>(expectedC(s, rank, nranks, op, seed));
  RANK_CHECK(memcmp(c.data(), want.data(), want.size() * sizeof(T)) == 0, "C differs from the integer reference");
  RANK_CHECK(c.back() == T(-12345), "an element past C was written");
}

class GemmReduceScatterSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(GemmReduceScatterSweep, ExactAgainstTheIntegerReference) {
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        int nranks = 0;
        RANK_CHECK_SUCCESS(slimecclCommCount(comm, &nranks), comm);
        slimecclStream_t stream = nullptr;
        RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
        uint64_t call = 0;
        for (slimecclDataType_t datatype : {slimecclFloat32, slimecclFloat64})
          for (const Shape& s : kShapes)
            for (slimecclRedOp_t op : {slimecclSum, slimecclMax, slimecclMin}) {
              const bool onStream = ++call % 2 == 0;
              withContext(concat("GemmReduceScatter ", s.mLocal, "x", s.n, "x", s.k, " of datatype ",
                                 static_cast<int>(datatype), " op ", static_cast<int>(op),
                                 onStream ? ", on a stream" : ", blocking"),
                          [&] {
                            if (datatype == slimecclFloat32)
                              runCall<float>(s, op, onStream, call, rank, nranks, comm, stream, datatype);
                            else
                              runCall<double>(s, op, onStream, call, rank, nranks, comm, stream, datatype);
                          });
            }
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
      },
      algorithmOptions(GetParam()));
}

std::vector<AlgorithmCase> gemmCases() {
  return algorithmCases(Collective::kReduce, true, {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                        {1, 2, 3, 4});
}

INSTANTIATE_TEST_SUITE_P(Launches, GemmReduceScatterSweep, ::testing::ValuesIn(gemmCases()), algorithmCaseName);

TEST(GemmReduceScatterErrors, RefusesOverlapsAndTypesWithASentence) {
  runRanks(Launch::kThreads, 2, [](int, slimecclComm_t comm) {
    const size_t mLocal = 2, n = 3, k = 4;
    std::vector<float> a(2 * mLocal * k), b(k * n), c(mLocal * n);
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclGemmReduceScatter(a.data(), b.data(), a.data() + 1, mLocal, n, k, slimecclFloat32,
                                                slimecclSum, comm, nullptr),
                      comm);
    RANK_CHECK(std::string(slimecclGetLastError(comm)).find("c overlaps a") != std::string::npos,
               slimecclGetLastError(comm));
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclGemmReduceScatter(a.data(), b.data(), b.data(), mLocal, n, k, slimecclFloat32,
                                                slimecclSum, comm, nullptr),
                      comm);
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclGemmReduceScatter(a.data(), b.data(), c.data(), mLocal, n, k, slimecclBfloat16,
                                                slimecclSum, comm, nullptr),
                      comm);
    RANK_CHECK(std::string(slimecclGetLastError(comm)).find("no host GEMM") != std::string::npos,
               slimecclGetLastError(comm));
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclGemmReduceScatter(a.data(), b.data(), c.data(), mLocal, n, k, slimecclFloat32,
                                                static_cast<slimecclRedOp_t>(99), comm, nullptr),
                      comm);
  });
}

}  // namespace
}  // namespace slimeccl_test
