// NCCL's calls take a cudaStream_t; slimeccl's take a slimecclStream_t in that CUDA stream's order
// (slimecclStreamCreateFromCuda). One is made per CUDA stream and GPU at its first use and kept:
// the legacy default stream (NULL, cudaStreamLegacy) and, per thread, cudaStreamPerThread included.
#pragma once

#include <nccl.h>
#include <slimeccl.h>

namespace slimeccl_nccl {

// The slimeccl stream for `stream` on GPU `device`. Where no GPU can be used, the NULL stream maps
// to slimeccl's NULL stream (the call returns when its ops are done), so host-memory programs run.
ncclResult_t streamFor(cudaStream_t stream, int device, slimecclStream_t* out);

}  // namespace slimeccl_nccl
