// Error strings, last error, version.
#include "src/api/boundary.h"
#include "src/comm.h"

using namespace slimeccl;

SLIMECCL_API const char* slimecclGetErrorString(slimecclResult_t result) {
  switch (result) {
    case slimecclSuccess: return "no error";
    case slimecclUnhandledDeviceError: return "unhandled device error (CUDA)";
    case slimecclSystemError: return "system error (a system call failed)";
    case slimecclInternalError: return "internal error (a bug in slimeccl or memory corruption)";
    case slimecclInvalidArgument: return "invalid argument";
    case slimecclInvalidUsage: return "invalid usage (wrong order of calls or mismatched ranks)";
    case slimecclRemoteError: return "remote error (a peer failed or the network broke)";
    case slimecclInProgress: return "operation in progress";
    case slimecclTimeout: return "timeout (a peer did not answer in time)";
    default: return "unknown result code";
  }
}

SLIMECCL_API const char* slimecclGetLastError(slimecclComm_t comm) {
  // An inherited comm's mutex may be held by a thread of the parent; its refusal is the thread's.
  if (comm == nullptr || commInheritedAcrossFork(comm)) return globalLastError();
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  // The sentence lives in the comm until the next error replaces it.
  static thread_local std::string copy;
  copy = comm->lastError;
  return copy.c_str();
}

SLIMECCL_API slimecclResult_t slimecclGetVersion(int* version) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (version == nullptr) return fail(slimecclInvalidArgument, "slimecclGetVersion: version is NULL");
    *version = SLIMECCL_VERSION_CODE;
    return slimecclSuccess;
  });
}
