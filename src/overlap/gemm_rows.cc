#include "src/overlap/gemm_rows.h"

#include <cblas.h>

#include <climits>
#include <cstring>

#include "src/base/error.h"
#include "src/op.h"

namespace slimeccl {

slimecclResult_t checkGemmRows(const GemmRows& rows, int rank, int nranks, const char* what) {
  // BLAS takes int dimensions and leading dimensions.
  const size_t m = rows.mLocal * static_cast<size_t>(nranks);
  if (rows.mLocal > INT_MAX / static_cast<size_t>(nranks) || rows.n > INT_MAX || rows.k > INT_MAX)
    return fail(slimecclInvalidArgument, "rank {}: {}: M = {} x {}, N = {}, K = {}: each must be at most {}", rank,
                what, nranks, rows.mLocal, rows.n, rows.k, INT_MAX);
  auto fits = [&](size_t rowsCount, size_t columns) {
    size_t bytes;
    return !__builtin_mul_overflow(rowsCount, columns, &bytes) &&
           !__builtin_mul_overflow(bytes, typeSize(rows.type), &bytes);
  };
  if (!fits(m, rows.k) || !fits(m, rows.n))
    return fail(slimecclInvalidArgument, "rank {}: {}: a {} x {} or {} x {} matrix does not fit in memory", rank, what,
                m, rows.k, m, rows.n);
  return slimecclSuccess;
}

void multiplyRowBlock(int srcRank, void* aBlock, size_t, void* user) {
  const GemmRows& rows = *static_cast<const GemmRows*>(user);
  const size_t cBlockBytes = rows.mLocal * rows.n * typeSize(rows.type);
  multiplyRows(rows.type, rows.mLocal, rows.n, rows.k, aBlock, rows.b,
               static_cast<char*>(rows.c) + static_cast<size_t>(srcRank) * cBlockBytes);
}

void multiplyRows(slimecclDataType_t type, size_t rows, size_t n, size_t k, const void* a, const void* b, void* out) {
  if (rows == 0 || n == 0) return;
  // A K of 0 makes the product zero; BLAS would refuse its leading dimension of 0.
  if (k == 0) {
    memset(out, 0, rows * n * typeSize(type));
    return;
  }
  const int m = static_cast<int>(rows), ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (type == slimecclFloat32)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, ki, 1.0f, static_cast<const float*>(a), ki,
                static_cast<const float*>(b), ni, 0.0f, static_cast<float*>(out), ni);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, ki, 1.0, static_cast<const double*>(a), ki,
                static_cast<const double*>(b), ni, 0.0, static_cast<double*>(out), ni);
}

}  // namespace slimeccl
