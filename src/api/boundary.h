// The C boundary: exported symbols, argument checks with sentences, and the bookkeeping that
// makes slimecclGetLastError work.
#pragma once

#include <string>

#include "include/slimeccl.h"
#include "src/base/error.h"
#include "src/comm.h"
#include "src/premul.h"

#define SLIMECCL_API extern "C" __attribute__((visibility("default")))

namespace slimeccl {

// Records a failed call's sentence for slimecclGetLastError (per comm, per thread, per process).
slimecclResult_t recordFailure(slimecclComm_t comm, slimecclResult_t rc);
// A call's result, its sentence recorded when it failed.
inline slimecclResult_t apiReturn(slimecclComm_t comm, slimecclResult_t rc) {
  return rc == slimecclSuccess || rc == slimecclInProgress ? rc : recordFailure(comm, rc);
}
const char* globalLastError();

slimecclResult_t checkCommArg(slimecclComm_t comm, const char* opName);
// Whether `comm` was made before a fork that led to this process (src/base/sys/fork_generation.h).
bool commInheritedAcrossFork(slimecclComm_t comm);
slimecclResult_t checkType(slimecclComm_t comm, const char* opName, slimecclDataType_t type);
// A built-in op, or a live PreMulSum operator of the comm for `type` (its scalar in *premul).
slimecclResult_t checkRedOp(slimecclComm_t comm, const char* opName, slimecclRedOp_t op, slimecclDataType_t type,
                            PreMulScalar* premul);
slimecclResult_t checkRank(slimecclComm_t comm, const char* opName, const char* what, int value);
slimecclResult_t checkBuffer(slimecclComm_t comm, const char* opName, const char* what, const void* ptr, size_t count);
slimecclResult_t checkStream(slimecclComm_t comm, const char* opName, slimecclStream_t stream);
// InvalidUsage inside a device AllGatherOverlap callback of `comm` (src/overlap/allgather_overlap.h).
slimecclResult_t checkNotQueuingBlocks(slimecclComm_t comm, const char* opName);
// Checks shared by every op on a comm: not inside its device callback, datatype, stream, and a
// comm that can still run ops.
slimecclResult_t checkOp(slimecclComm_t comm, const char* opName, slimecclDataType_t type, slimecclStream_t stream);

}  // namespace slimeccl

// Runs body (returning slimecclResult_t) and reports its outcome at the boundary. No exception
// crosses into C: an allocation failure becomes SystemError.
#define SLIMECCL_API_BODY(comm, body)                                                                    \
  do {                                                                                                   \
    ::slimeccl::clearThreadError();                                                                      \
    slimecclResult_t api_rc_;                                                                            \
    try {                                                                                                \
      api_rc_ = (body)();                                                                                \
    } catch (const std::exception& e) {                                                                  \
      api_rc_ = ::slimeccl::fail(slimecclSystemError, "{}: internal exception: {}", __func__, e.what()); \
    }                                                                                                    \
    return ::slimeccl::apiReturn(comm, api_rc_);                                                         \
  } while (0)

// The same for calls that use a live comm: the comm's pending count stays raised until the
// outcome is recorded (CallCount, src/comm.h), so that a concurrent abort or destroy waits for this
// call to leave.
#define SLIMECCL_API_COMM_BODY(comm, body)                                                                           \
  do {                                                                                                               \
    ::slimeccl::clearThreadError();                                                                                  \
    if (const slimecclResult_t arg_rc_ = ::slimeccl::checkCommArg(comm, __func__); arg_rc_ != slimecclSuccess)       \
      return ::slimeccl::apiReturn(nullptr, arg_rc_);                                                                \
    const ::slimeccl::CallCount call_count_(comm);                                                                   \
    slimecclResult_t api_rc_;                                                                                        \
    try {                                                                                                            \
      api_rc_ = (body)();                                                                                            \
    } catch (const std::exception& e) {                                                                              \
      api_rc_ = ::slimeccl::fail(slimecclSystemError, "rank {}: {}: internal exception: {}", (comm)->rank, __func__, \
                                 e.what());                                                                          \
    }                                                                                                                \
    ::slimeccl::apiReturn(comm, api_rc_);                                                                            \
    return api_rc_;                                                                                                  \
  } while (0)
