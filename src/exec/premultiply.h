// Host memory runs a pre-multiplied sum (src/premul.h) as a sum: each such op's input is first
// multiplied by the rank's scalar into memory of its own, and the op then reads it from there, out
// of place, as slimecclSum. What the ops read must be host memory by then (staged).
#pragma once

#include <vector>

#include "src/device/gpu.h"
#include "src/op.h"

namespace slimeccl {

// `held` keeps the premultiplied inputs until the ops are done; order: how a device scalar is read.
slimecclResult_t premultiplyInputs(std::vector<OpRecord>& ops, std::vector<std::vector<char>>& held, CopyOrder order);

}  // namespace slimeccl
