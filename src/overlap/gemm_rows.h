// The GEMM half of AllGatherGemm and GemmReduceScatter on host buffers: the C rows of rank r are
// A's block from rank r times B (AllGatherGemm), the partial product bound for rank r is A's rows
// of block r times B (GemmReduceScatter); one BLAS call per block, so the overlapped and the
// sequential paths make the same calls and produce the same bits.
#pragma once

#include <cstddef>

#include "include/slimeccl.h"

namespace slimeccl {

struct GemmRows {
  slimecclDataType_t type;
  size_t mLocal, n, k;
  const void* b;  // k x n, row-major
  void* c;        // (nranks * mLocal) x n, row-major
};

// Success, or InvalidArgument with a sentence (naming the op `what`) when the sizes do not fit
// BLAS's int arguments or memory.
slimecclResult_t checkGemmRows(const GemmRows& rows, int rank, int nranks, const char* what);

// An AllGatherOverlap callback: user is a GemmRows, aBlock the mLocal x k rows of rank srcRank.
void multiplyRowBlock(int srcRank, void* aBlock, size_t count, void* user);

// out[rows x n] = a[rows x k] x b[k x n], row-major, float or double, sizes checked by
// checkGemmRows: the one BLAS call both overlap ops make per block.
void multiplyRows(slimecclDataType_t type, size_t rows, size_t n, size_t k, const void* a, const void* b, void* out);

}  // namespace slimeccl
