// AllGatherGemm: C = AllGather(A) x B as an AllGatherOverlap whose callback multiplies each landed
// block of A by B into that block's rows of C (src/overlap/gemm_rows.h).
#pragma once

#include "include/slimeccl.h"

struct slimecclComm;

namespace slimeccl {

struct GemmCall {
  slimecclComm* comm;
  const void* aLocal;
  void* aGathered;  // NULL: a workspace of the communicator
  const void* b;
  void* c;
  size_t mLocal, n, k;
  slimecclDataType_t type;
  slimecclStream_t stream;
};

// On host buffers: checks the sizes against BLAS and memory and that C shares no bytes with A or
// B, then submits (src/overlap/device_allgather_gemm.h takes device buffers).
slimecclResult_t submitAllGatherGemm(const GemmCall& call);

}  // namespace slimeccl
