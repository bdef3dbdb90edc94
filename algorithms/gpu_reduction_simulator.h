// Checks a GPU reduction plan (algorithms/gpu_reduction.h) on host memory: every rank's plan runs
// as the kernels do, all at once, so the check fails where a span that one rank writes is read or
// written by another (the result would depend on timing), and where a span leaves its buffer.
// Otherwise the results land in buffers[r].recv (in place too: there the simulator reads and
// writes the send buffer, which the receive buffer aliases, and copies the receive view out).
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

}  // namespace slimeccl
