// The cuBLASLt calls the GEMM-overlap ops make on device buffers, loaded with dlopen on first use:
// a process that never multiplies on a GPU neither pays cuBLASLt's load (about 0.15 s and 200 MB of
// mappings per process) nor needs it installed. Device code only: it names cuBLASLt's types.
#pragma once

#ifdef SLIMECCL_HAVE_CUDA

#include <cublasLt.h>

#include "include/slimeccl.h"

namespace slimeccl {

struct CublasLtCalls {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtMatmulDescCreate) descCreate;
  decltype(&cublasLtMatmulDescDestroy) descDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) descSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy;
  decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtGetStatusString) statusString;
};

// The calls of libcublasLt.so.<the CUDA major this build has>, found as dlopen finds it or beside
// the CUDA runtime this process loaded; loaded once. On failure, *out is null and a sentence
// (naming `rank` and the op `what`) says why.
slimecclResult_t cublasLtCalls(int rank, const char* what, const CublasLtCalls** out);

}  // namespace slimeccl

#endif
