// What the NCCL calls share: the communicator NCCL's handle stands for, and the translation of
// NCCL's values into slimeccl's and back.
#pragma once

#include <nccl.h>
#include <slimeccl.h>

#include <string>

// NCCL's opaque communicator: a slimeccl communicator and the GPU it was made on (-1: none). The
// native comm is null while a group that made it has not ended, and after ncclCommRevoke.
struct ncclComm {
  slimecclComm_t native;
  int device;
  bool revoked;
  // Made in a group: how its init at ncclGroupEnd went, and the sentence when it failed.
  ncclResult_t initResult;
  std::string initError;
};

namespace slimeccl_nccl {

ncclResult_t fromNative(slimecclResult_t rc);
// The thread's error sentence for a failure found here, before slimeccl was called.
ncclResult_t refuse(ncclResult_t rc, const std::string& sentence);

// slimeccl's datatype for NCCL's. Data-moving calls take the fp8 types as bytes; false where
// `reduces` and the type has no slimeccl reduction, or it is no type (typeRefusal says which).
bool nativeType(ncclDataType_t type, bool reduces, slimecclDataType_t* out);
std::string typeRefusal(ncclDataType_t type);
// NCCL's built-in reduction operators are slimeccl's; false for others (opRefusal says so).
bool nativeOp(ncclRedOp_t op, slimecclRedOp_t* out);
std::string opRefusal(ncclRedOp_t op);

// "rank R: Call", the start of a refusal's sentence on a usable comm.
std::string rankedCall(ncclComm_t comm, const char* call);

// The slimeccl config for NCCL's (null stays null): blocking, netName and commName carry over; the
// other fields tune NCCL's kernels and are accepted as they are.
bool nativeConfig(const ncclConfig_t* config, slimecclConfig_t* out);

// The GPU current on this thread, or -1 without one.
int currentDevice();

// A new NCCL communicator around `native`, made on `device`.
ncclComm_t wrap(slimecclComm_t native, int device);
// ncclSuccess where `comm` can take `call` now; else the code, with a sentence: NULL, revoked,
// made in a group that has not ended, or whose init at the group's end failed.
ncclResult_t usable(ncclComm_t comm, const char* call);

// Makes GPU `device` current for the scope; nothing for -1 or without CUDA.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
};

}  // namespace slimeccl_nccl
