// allgather_gemm_perf -D 1: for each shape, on each rank's GPU, times slimeccl's AllGather alone,
// the cuBLASLt GEMM alone (one call over all rows, as after an AllGather), the same GEMM as the fused
// call makes it (one call per rank's row block, one after another), NCCL's AllGather followed
// by that GEMM (NCCL loaded at run time, -B), and slimecclAllGatherGemm; prints the overlap
// efficiency max(allgather, gemm) / overlapped and NCCL's sequential time over it. With -c 1, C is
// checked bit for bit against cuBLASLt run block by block on the gathered A. Built with CUDA only.
#pragma once

#include <cstdint>

#include "common/gemm_options.h"
#include "common/nccl_library.h"
#include "common/rank_comm.h"

namespace slimeccl_perf {

// Returns the count of wrong elements over all shapes (summed over ranks).
int64_t runDeviceRank(LocalProcess& process, int thread, const GemmOptions& options, const NcclLibrary& nccl);

}  // namespace slimeccl_perf
