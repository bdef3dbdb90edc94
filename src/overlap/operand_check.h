// The GEMM-overlap ops' operands, on host or device alike: C is written while A and B are still
// read.
#pragma once

#include "src/overlap/allgather_gemm.h"
#include "src/overlap/gemm_reducescatter.h"

namespace slimeccl {

// C shares no bytes with aLocal, aGathered or B, nor aGathered with B (aGathered against aLocal
// is the AllGather's own check: apart, or exactly in place).
slimecclResult_t checkSeparateOutputs(const GemmCall& call);
// GemmReduceScatter's C shares no bytes with A or B: C is written while later blocks' GEMMs still
// read them.
slimecclResult_t checkGemmReduceScatterOperands(const GemmReduceScatterCall& call);

}  // namespace slimeccl
