// The few cuBLAS calls AllGatherGemm makes on device buffers, loaded with dlopen on first use: a
// process that never multiplies on a GPU neither pays cuBLAS's load (about 0.15 s and 200 MB of
// mappings per process) nor needs it installed. Device code only: it names cuBLAS's types.
#pragma once

#ifdef SLIMECCL_HAVE_CUDA

#include <cublas_v2.h>

#include "include/slimeccl.h"

namespace slimeccl {

struct CublasCalls {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) setStream;
  decltype(&cublasSetWorkspace_v2) setWorkspace;
  // cublasGemmEx has a C++ overload beside the library's C call: this is the C call's type.
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                           const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                           cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  decltype(&cublasGetStatusString) statusString;
};

// The calls of libcublas.so.<the CUDA major this build has>, found as dlopen finds it or beside
// the CUDA runtime this process loaded; loaded once. On failure, *out is null and a sentence
// (naming `rank`) says why.
slimecclResult_t cublasCalls(int rank, const CublasCalls** out);

}  // namespace slimeccl

#endif
