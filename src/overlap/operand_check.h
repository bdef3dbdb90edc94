// AllGatherGemm's operands, on host or device alike: C is written while A and B are still read.
#pragma once

#include "src/overlap/allgather_gemm.h"

namespace slimeccl {

// C shares no bytes with aLocal, aGathered or B, nor aGathered with B (aGathered against aLocal
// is the AllGather's own check: apart, or exactly in place).
slimecclResult_t checkSeparateOutputs(const GemmCall& call);

}  // namespace slimeccl
