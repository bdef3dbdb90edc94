// NCCL's pre-multiplied sum: the operators slimecclRedOpCreatePreMulSum makes for a comm, and what
// a call takes from one, fixed at the call (an operator may be destroyed while calls made with it
// still run): the rank's scalar, or where it lives in device memory.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/gpu.h"

namespace slimeccl {

struct PreMulScalar {
  bool on = false;
  const void* device = nullptr;  // slimecclScalarDevice: read when the op runs
  int deviceIndex = -1;          // the GPU that holds it
  uint64_t bits = 0;             // slimecclScalarHostImmediate: the scalar's bytes
};

class PreMulSumOps {
 public:
  // Errors name `rank` and the call.
  slimecclResult_t create(int rank, const void* scalar, slimecclDataType_t type, slimecclScalarResidence_t residence,
                          slimecclRedOp_t* out);
  slimecclResult_t destroy(int rank, slimecclRedOp_t op);
  // The scalar of operator `op` (one this comm made and has not destroyed, for `type`) for call
  // `opName`; an error otherwise.
  slimecclResult_t take(int rank, const char* opName, slimecclRedOp_t op, slimecclDataType_t type,
                        PreMulScalar* out) const;

 private:
  struct Entry {
    bool live = false;
    slimecclDataType_t type = slimecclFloat32;
    PreMulScalar scalar;
  };
  // The live operator `op`, or null. Under mutex_.
  const Entry* live(slimecclRedOp_t op) const;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // operator slimecclNumOps + i
};

// The scalar's bytes where the op runs: read from device memory now for slimecclScalarDevice.
// order: as the op's staging copies go (src/device/gpu.h).
slimecclResult_t premulScalarBits(const PreMulScalar& scalar, slimecclDataType_t type, CopyOrder order, uint64_t* bits);

}  // namespace slimeccl
