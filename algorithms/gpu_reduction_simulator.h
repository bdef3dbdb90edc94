// Checks a GPU reduction plan (algorithms/gpu_reduction.h) on host memory. Every rank's plan runs as
// the kernels and copies do: ranks at once, each rank's steps and then its gather copies in order,
// a step that waits for another rank's step after that one. The check fails where two ranks reach
// the same bytes, one of them writing, and nothing in the plans orders the two (the result would
// depend on timing), and where a span leaves its buffer. Otherwise the results land in
// buffers[r].recv (in place too: there the simulator reads and writes the send buffer, which the
// receive buffer aliases, and copies the receive view out).
#pragma once

#include <string>
#include <vector>

#include "algorithms/gpu_reduction.h"
#include "algorithms/simulator.h"

namespace slimeccl {

struct GpuReductionCheck {
  bool ok = true;
  std::string error;
};

// buffers[r].send holds rank r's input (ReduceScatter: nranks * count elements), buffers[r].recv
// is sized for its output (Reduce: only the root's). request.rank is ignored: every rank runs.
GpuReductionCheck simulateGpuReduction(GpuReductionRequest request, std::vector<RankBuffers>& buffers,
                                       slimecclDataType_t type, slimecclRedOp_t op);
// As above for plans given rank by rank (plans[r] is rank r's), as a test may alter them.
GpuReductionCheck simulateGpuReductionPlans(const GpuReductionRequest& request,
                                            const std::vector<GpuReductionPlan>& plans,
                                            std::vector<RankBuffers>& buffers, slimecclDataType_t type,
                                            slimecclRedOp_t op);

}  // namespace slimeccl
