#include <strings.h>

#include <cstddef>
#include <cstring>

#include "compat/nccl/compat.h"
#include "compat/nccl/last_error.h"

#if SLIMECCL_NCCL_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace slimeccl_nccl {

ncclResult_t fromNative(slimecclResult_t rc) {
  forgetRefusal();
  switch (rc) {
    case slimecclSuccess: return ncclSuccess;
    case slimecclUnhandledDeviceError: return ncclUnhandledCudaError;
    case slimecclSystemError: return ncclSystemError;
    case slimecclInternalError: return ncclInternalError;
    case slimecclInvalidArgument: return ncclInvalidArgument;
    case slimecclInvalidUsage: return ncclInvalidUsage;
    case slimecclRemoteError: return ncclRemoteError;
    case slimecclInProgress: return ncclInProgress;
    // NCCL 2.28 has no timeout code; it reports a peer that stops answering as a system error.
    case slimecclTimeout: return ncclSystemError;
    default: return ncclInternalError;
  }
}

ncclResult_t refuse(ncclResult_t rc, const std::string& sentence) {
  recordRefusal(sentence);
  return rc;
}

bool nativeType(ncclDataType_t type, bool reduces, slimecclDataType_t* out) {
  if (type >= ncclInt8 && type <= ncclBfloat16) {
    *out = static_cast<slimecclDataType_t>(type);
    return true;
  }
  if ((type == ncclFloat8e4m3 || type == ncclFloat8e5m2) && !reduces) {
    *out = slimecclUint8;
    return true;
  }
  return false;
}

std::string typeRefusal(ncclDataType_t type) {
  return "datatype " + std::to_string(static_cast<int>(type)) +
         (type == ncclFloat8e4m3 || type == ncclFloat8e5m2
              ? " (an fp8 type) has no reduction in slimeccl; only calls that move data take it"
              : " is not an ncclDataType_t (0..11)");
}

// Operators from ncclRedOpCreatePreMulSum carry slimeccl's numbers, which the call checks.
bool nativeOp(ncclRedOp_t op, slimecclRedOp_t* out) {
  if (op < ncclSum) return false;
  *out = static_cast<slimecclRedOp_t>(op);
  return true;
}

std::string opRefusal(ncclRedOp_t op) {
  return "reduction op " + std::to_string(static_cast<int>(op)) + " is not a live ncclRedOp_t";
}

std::string rankedCall(ncclComm_t comm, const char* call) {
  int rank = -1;
  slimecclCommUserRank(comm->native, &rank);
  return "rank " + std::to_string(rank) + ": " + call;
}

bool nativeConfig(const ncclConfig_t* config, slimecclConfig_t* out) {
  *out = SLIMECCL_CONFIG_INITIALIZER;
  if (config == nullptr) return true;
  if (config->magic != 0xcafebeef || config->size < offsetof(ncclConfig_t, commName) + sizeof(config->commName)) {
    recordRefusal("the ncclConfig_t was not filled with NCCL_CONFIG_INITIALIZER");
    return false;
  }
  out->blocking = config->blocking;
  out->maxCTAs = config->maxCTAs;
  out->commName = config->commName;
  if (config->netName != nullptr) {
    // NCCL's module names, as NCCL_NET takes them, for slimeccl's modules.
    if (strcasecmp(config->netName, "Socket") == 0)
      out->netName = "socket";
    else if (strcasecmp(config->netName, "IB") == 0)
      out->netName = "ib";
    else
      out->netName = config->netName;
  }
  return true;
}

int currentDevice() {
#if SLIMECCL_NCCL_WITH_CUDA
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
#else
  return -1;
#endif
}

ncclComm_t wrap(slimecclComm_t native, int device) { return new ncclComm{native, device, false, ncclSuccess, {}}; }

ncclResult_t usable(ncclComm_t comm, const char* call) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, std::string(call) + ": comm is NULL");
  if (comm->revoked) return refuse(ncclInvalidUsage, std::string(call) + ": the comm was revoked (ncclCommRevoke)");
  if (comm->native == nullptr && comm->initResult != ncclSuccess)
    return refuse(comm->initResult, std::string(call) + ": the comm's init at ncclGroupEnd failed: " + comm->initError);
  if (comm->native == nullptr)
    return refuse(ncclInvalidUsage,
                  std::string(call) + ": the comm is made at the end of the group that made it (ncclGroupEnd)");
  return ncclSuccess;
}

ScopedDevice::ScopedDevice(int device) {
#if SLIMECCL_NCCL_WITH_CUDA
  if (device >= 0 && cudaGetDevice(&previous_) == cudaSuccess && previous_ != device)
    switched_ = cudaSetDevice(device) == cudaSuccess;
  cudaGetLastError();
#else
  (void)device;
#endif
}

ScopedDevice::~ScopedDevice() {
#if SLIMECCL_NCCL_WITH_CUDA
  if (switched_) cudaSetDevice(previous_);
#endif
}

}  // namespace slimeccl_nccl
