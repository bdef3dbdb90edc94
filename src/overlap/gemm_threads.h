// How many threads the BLAS uses for AllGatherGemm: SLIMECCL_GEMM_THREADS, by default one fewer
// than the CPUs this process may run on (at least one), so that the executor's progress thread
// keeps a core for itself while the GEMM of the landed blocks runs.
#pragma once

namespace slimeccl {

// Applied to the BLAS once per process, at the first AllGatherGemm.
void applyGemmThreads();

}  // namespace slimeccl
