// GemmReduceScatter on device buffers: a ReduceScatterOverlap on device buffers whose producer
// queues the cuBLASLt GEMM of A's row block d into block d of the communicator's partial-products
// workspace (src/device/device_gemm.h), so block d is reduced beside the GEMM of block d+1.
#pragma once

#include "src/overlap/gemm_reducescatter.h"

namespace slimeccl {

// Arguments validated by the caller (device buffers of the stream's GPU, a CUDA-ordered stream, no
// open group, a type cuBLASLt takes); checks the sizes and operands, then submits.
slimecclResult_t submitDeviceGemmReduceScatter(const GemmReduceScatterCall& call);

}  // namespace slimeccl
