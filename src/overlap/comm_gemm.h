// What the GEMM-overlap ops share on device buffers: the communicator's cuBLASLt (made by the
// first such call, on its stream's GPU) and the check of sizes against cuBLASLt's int dimensions.
#pragma once

#include <cstddef>

#include "include/slimeccl.h"

struct slimecclComm;

namespace slimeccl {

class DeviceGemm;

// The comm's DeviceGemm on `device`; calls on another GPU than the first one's are refused. `what`
// names the op in a sentence.
slimecclResult_t commDeviceGemm(slimecclComm* comm, int device, const char* what, DeviceGemm** out);

// mLocal, n and k fit cuBLASLt's int dimensions, and nranks blocks of mLocal rows of k or n columns
// fit the address space.
slimecclResult_t checkDeviceGemmSizes(const slimecclComm* comm, const char* what, size_t mLocal, size_t n, size_t k,
                                      slimecclDataType_t type);

}  // namespace slimeccl
