// AllGatherGemm on device buffers: an AllGather GPU to GPU whose consumer queues a cuBLAS GEMM of
// each row block on the caller's CUDA stream as the block lands (src/device/device_gemm.h); the
// own block's GEMM is queued first and starts at once.
#pragma once

#include "src/overlap/allgather_gemm.h"

namespace slimeccl {

// Arguments validated by the caller (device buffers of the stream's GPU, a CUDA-ordered stream, no
// open group, a type cuBLAS takes); checks sizes against cuBLAS and that C shares no bytes with A
// or B, then submits.
slimecclResult_t submitDeviceAllGatherGemm(const GemmCall& call);

}  // namespace slimeccl
