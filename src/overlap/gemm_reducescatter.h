// GemmReduceScatter: C = this rank's block of rows of ReduceScatter(A x B), as a
// ReduceScatterOverlap whose producer multiplies A's row block d by B into block d of a workspace
// (src/overlap/gemm_rows.h), so the GEMM of block d+1 runs while block d is being reduced.
#pragma once

#include "include/slimeccl.h"
#include "src/premul.h"

struct slimecclComm;

namespace slimeccl {

struct GemmReduceScatterCall {
  slimecclComm* comm;
  const void* a;  // (nranks * mLocal) x k, row-major
  const void* b;  // k x n
  void* c;        // mLocal x n
  size_t mLocal, n, k;
  slimecclDataType_t type;
  slimecclRedOp_t redOp;
  PreMulScalar premul;
  slimecclStream_t stream;
};

// On host buffers: checks the sizes against BLAS and memory and the operands, then submits
// (src/overlap/device_gemm_reducescatter.h takes device buffers).
slimecclResult_t submitGemmReduceScatter(const GemmReduceScatterCall& call);

}  // namespace slimeccl
