#include "src/overlap/gemm_rows.h"

#include <cblas.h>

#include <climits>
#include <cstring>

#include "src/base/error.h"
#include "src/op.h"

namespace slimeccl {

slimecclResult_t checkGemmRows(const GemmRows& rows, int rank, int nranks) {
  // BLAS takes int dimensions and leading dimensions.
  const size_t m = rows.mLocal * static_cast<size_t>(nranks);
  if (rows.mLocal > INT_MAX / static_cast<size_t>(nranks) || rows.n > INT_MAX || rows.k > INT_MAX)
    return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: M = {} x {}, N = {}, K = {}: each must be at most {}",
                rank, nranks, rows.mLocal, rows.n, rows.k, INT_MAX);
  auto fits = [&](size_t rowsCount, size_t columns) {
    size_t bytes;
    return !__builtin_mul_overflow(rowsCount, columns, &bytes) &&
           !__builtin_mul_overflow(bytes, typeSize(rows.type), &bytes);
  };
  if (!fits(m, rows.k) || !fits(m, rows.n))
    return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: a {} x {} or {} x {} matrix does not fit in memory",
                rank, m, rows.k, m, rows.n);
  return slimecclSuccess;
}

void multiplyRowBlock(int srcRank, void* aBlock, size_t, void* user) {
  const GemmRows& rows = *static_cast<const GemmRows*>(user);
  if (rows.n == 0) return;
  const size_t cBlockBytes = rows.mLocal * rows.n * typeSize(rows.type);
  char* c = static_cast<char*>(rows.c) + static_cast<size_t>(srcRank) * cBlockBytes;
  // A K of 0 makes C zero; BLAS would refuse its leading dimension of 0.
  if (rows.k == 0) {
    memset(c, 0, cBlockBytes);
    return;
  }
  const int m = static_cast<int>(rows.mLocal), n = static_cast<int>(rows.n), k = static_cast<int>(rows.k);
  if (m == 0) return;
  if (rows.type == slimecclFloat32)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, static_cast<const float*>(aBlock), k,
                static_cast<const float*>(rows.b), n, 0.0f, reinterpret_cast<float*>(c), n);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, static_cast<const double*>(aBlock), k,
                static_cast<const double*>(rows.b), n, 0.0, reinterpret_cast<double*>(c), n);
}

}  // namespace slimeccl
