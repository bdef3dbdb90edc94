// NCCL's communicator calls on slimeccl's.
#include <cstring>
#include <vector>

#include "compat/nccl/api.h"
#include "compat/nccl/compat.h"
#include "compat/nccl/group_init.h"
#include "compat/nccl/last_error.h"

#if SLIMECCL_NCCL_WITH_CUDA
#include <cuda_runtime.h>
#endif

using namespace slimeccl_nccl;

static_assert(sizeof(ncclUniqueId) == sizeof(slimecclUniqueId), "the unique ids must be alike");

namespace {

slimecclUniqueId nativeId(const ncclUniqueId& id) {
  slimecclUniqueId out;
  memcpy(&out, &id, sizeof(out));
  return out;
}

// The GPUs the first `count` ranks of ncclCommInitAll take when it is given no list: the first
// GPUs of the process, as NCCL's; none where no GPU can be used.
std::vector<int> defaultDevices(int count) {
  std::vector<int> devices;
#if SLIMECCL_NCCL_WITH_CUDA
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    cudaGetLastError();
    gpus = 0;
  }
  if (gpus > 0)
    for (int r = 0; r < count; ++r) devices.push_back(r % gpus);
#else
  (void)count;
#endif
  return devices;
}

ncclResult_t initRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                      const char* call) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, std::string(call) + ": comm is NULL");
  slimecclConfig_t native;
  if (!nativeConfig(config, &native)) return ncclInvalidArgument;
  const int device = currentDevice();
  // As NCCL's, the comm is on the GPU current at the call; named, it sets up its GPU path at init,
  // so that one thread may drive all its ranks (nccl-tests -g N).
  if (device >= 0) native.cudaDevice = device;
  const ncclComm_t made = wrap(nullptr, device);
  if (deferInit(made, nranks, nativeId(id), rank, native)) {
    *comm = made;
    return fromNative(slimecclSuccess);
  }
  const ncclResult_t rc = fromNative(slimecclCommInitRankConfig(&made->native, nranks, nativeId(id), rank, &native));
  if (made->native == nullptr) {
    delete made;
    *comm = nullptr;
  } else {
    *comm = made;
  }
  return rc;
}

}  // namespace

NCCL_API ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return refuse(ncclInvalidArgument, "GetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return fromNative(slimecclSuccess);
}

NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return refuse(ncclInvalidArgument, "GetUniqueId: uniqueId is NULL");
  return fromNative(slimecclGetUniqueId(reinterpret_cast<slimecclUniqueId*>(uniqueId)));
}

NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                             ncclConfig_t* config) {
  return initRank(comm, nranks, commId, rank, config, "CommInitRankConfig");
}

NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, commId, rank, nullptr, "CommInitRank");
}

// Every rank passes the same ids, so the first serves for all: slimeccl's bootstrap root needs no
// spreading over several.
NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                               ncclUniqueId* commIds, ncclConfig_t* config) {
  if (nId < 1 || commIds == nullptr)
    return refuse(ncclInvalidArgument,
                  "CommInitRankScalable: needs at least one unique id (nId " + std::to_string(nId) + ")");
  return initRank(newcomm, nranks, commIds[0], myrank, config, "CommInitRankScalable");
}

NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr) return refuse(ncclInvalidArgument, "CommInitAll: comms is NULL");
  if (ndev < 1) return refuse(ncclInvalidArgument, "CommInitAll: ndev " + std::to_string(ndev) + " is below 1");
  std::vector<int> devices = devlist != nullptr ? std::vector<int>(devlist, devlist + ndev) : defaultDevices(ndev);
  std::vector<slimecclComm_t> made(static_cast<size_t>(ndev), nullptr);
  const ncclResult_t rc =
      fromNative(slimecclCommInitAll(made.data(), ndev, devices.empty() ? nullptr : devices.data()));
  for (int r = 0; r < ndev; ++r)
    comms[r] = made[r] != nullptr ? wrap(made[r], devices.empty() ? -1 : devices[r]) : nullptr;
  return rc;
}

NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, "CommFinalize: comm is NULL");
  if (comm->native == nullptr) return fromNative(slimecclSuccess);
  return fromNative(slimecclCommFinalize(comm->native));
}

// The handle goes only with its comm: where slimeccl refuses (ops still waiting in an open group),
// it stays, and the call can be made again.
NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, "CommDestroy: comm is NULL");
  const ncclResult_t rc = comm->native != nullptr ? fromNative(slimecclCommDestroy(comm->native)) : ncclSuccess;
  if (rc == ncclSuccess) delete comm;
  return rc;
}

NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, "CommAbort: comm is NULL");
  const ncclResult_t rc = comm->native != nullptr ? fromNative(slimecclCommAbort(comm->native)) : ncclSuccess;
  if (rc == ncclSuccess) delete comm;
  return rc;
}

// The comm's ops end at once, as ncclCommAbort ends them; the handle stays for ncclCommDestroy.
NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  if (comm == nullptr) return refuse(ncclInvalidArgument, "CommRevoke: comm is NULL");
  if (revokeFlags != NCCL_REVOKE_DEFAULT)
    return refuse(ncclInvalidArgument,
                  "CommRevoke: revokeFlags must be NCCL_REVOKE_DEFAULT (0), not " + std::to_string(revokeFlags));
  if (comm->revoked || comm->native == nullptr) return fromNative(slimecclSuccess);
  const ncclResult_t rc = fromNative(slimecclCommAbort(comm->native));
  if (rc == ncclSuccess) {
    comm->native = nullptr;
    comm->revoked = true;
  }
  return rc;
}

NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  if (newcomm == nullptr) return refuse(ncclInvalidArgument, "CommSplit: newcomm is NULL");
  if (const ncclResult_t rc = usable(comm, "CommSplit"); rc != ncclSuccess) return rc;
  slimecclConfig_t native;
  if (!nativeConfig(config, &native)) return ncclInvalidArgument;
  if (comm->device >= 0) native.cudaDevice = comm->device;
  slimecclComm_t child = nullptr;
  const ncclResult_t rc =
      fromNative(slimecclCommSplit(comm->native, color, key, &child, config != nullptr ? &native : nullptr));
  *newcomm = child != nullptr ? wrap(child, comm->device) : nullptr;
  return rc;
}

// Only the ranks that stay call it; slimecclCommShrink makes the new comm, numbered in the old
// order, whose secret never crosses the wire.
NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                                     ncclConfig_t* config, int shrinkFlags) {
  if (newcomm == nullptr) return refuse(ncclInvalidArgument, "CommShrink: newcomm is NULL");
  if (const ncclResult_t rc = usable(comm, "CommShrink"); rc != ncclSuccess) return rc;
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
    return refuse(ncclInvalidArgument, "CommShrink: shrinkFlags " + std::to_string(shrinkFlags) +
                                           " is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT");
  if (insideGroup())
    return refuse(ncclInvalidUsage,
                  "CommShrink: called inside a group; the ranks that stay meet over the old comm, "
                  "which a group would hold back until its end");
  slimecclConfig_t native;
  if (!nativeConfig(config, &native)) return ncclInvalidArgument;
  if (comm->device >= 0) native.cudaDevice = comm->device;
  ScopedDevice on(comm->device);
  slimecclComm_t made = nullptr;
  const ncclResult_t rc =
      fromNative(slimecclCommShrink(comm->native, excludeRanksList, excludeRanksCount, &made, &native));
  *newcomm = made != nullptr ? wrap(made, comm->device) : nullptr;
  return rc;
}

NCCL_API const char* ncclGetErrorString(ncclResult_t result) {
  if (result < ncclSuccess || result >= ncclNumResults) return "unknown ncclResult_t";
  return slimecclGetErrorString(static_cast<slimecclResult_t>(result));
}

NCCL_API const char* ncclGetLastError(ncclComm_t comm) {
  if (const char* refused = lastRefusal()) return refused;
  return slimecclGetLastError(comm != nullptr ? comm->native : nullptr);
}

// slimeccl reads its log settings (SLIMECCL_DEBUG) once per process; there is nothing to reload.
NCCL_API void ncclResetDebugInit(void) {}

NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (comm == nullptr || asyncError == nullptr)
    return refuse(ncclInvalidArgument, "CommGetAsyncError: comm or asyncError is NULL");
  if (comm->native == nullptr) {
    // Revoked: nothing runs any more; made in a group: still to be made, or its init failed.
    *asyncError = comm->revoked ? ncclSuccess : comm->initResult != ncclSuccess ? comm->initResult : ncclInProgress;
    return fromNative(slimecclSuccess);
  }
  slimecclResult_t native = slimecclSuccess;
  const ncclResult_t rc = fromNative(slimecclCommGetAsyncError(comm->native, &native));
  *asyncError = fromNative(native);
  return rc;
}

NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (const ncclResult_t rc = usable(comm, "CommCount"); rc != ncclSuccess) return rc;
  return fromNative(slimecclCommCount(comm->native, count));
}

NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (const ncclResult_t rc = usable(comm, "CommUserRank"); rc != ncclSuccess) return rc;
  return fromNative(slimecclCommUserRank(comm->native, rank));
}

NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return refuse(ncclInvalidArgument, "CommCuDevice: comm or device is NULL");
  if (comm->device < 0) return refuse(ncclInvalidUsage, "CommCuDevice: the comm was made where no GPU could be used");
  *device = comm->device;
  return fromNative(slimecclSuccess);
}

NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  if (const ncclResult_t rc = usable(comm, "CommRegister"); rc != ncclSuccess) return rc;
  return fromNative(slimecclCommRegister(comm->native, buff, size, handle));
}

NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  if (const ncclResult_t rc = usable(comm, "CommDeregister"); rc != ncclSuccess) return rc;
  return fromNative(slimecclCommDeregister(comm->native, handle));
}

// A window is a registration: slimeccl has no symmetric kernels that would use one otherwise.
NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                             int winFlags) {
  (void)winFlags;
  if (win == nullptr) return refuse(ncclInvalidArgument, "CommWindowRegister: win is NULL");
  void* handle = nullptr;
  const ncclResult_t rc = ncclCommRegister(comm, buff, size, &handle);
  *win = static_cast<ncclWindow_t>(handle);
  return rc;
}

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return ncclCommDeregister(comm, win);
}

NCCL_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return refuse(ncclInvalidArgument, "MemAlloc: ptr is NULL");
#if SLIMECCL_NCCL_WITH_CUDA
  if (size == 0) {
    *ptr = nullptr;
    return fromNative(slimecclSuccess);
  }
  const cudaError_t rc = cudaMalloc(ptr, size);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return refuse(ncclUnhandledCudaError, std::string("MemAlloc: cudaMalloc of ") + std::to_string(size) +
                                              " bytes failed: " + cudaGetErrorString(rc));
  }
  return fromNative(slimecclSuccess);
#else
  (void)size;
  return refuse(ncclInvalidUsage, "MemAlloc: this libnccl was built without CUDA, and NCCL's memory is GPU memory");
#endif
}

NCCL_API ncclResult_t ncclMemFree(void* ptr) {
#if SLIMECCL_NCCL_WITH_CUDA
  if (ptr == nullptr) return fromNative(slimecclSuccess);
  const cudaError_t rc = cudaFree(ptr);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return refuse(ncclUnhandledCudaError, std::string("MemFree: cudaFree failed: ") + cudaGetErrorString(rc));
  }
  return fromNative(slimecclSuccess);
#else
  if (ptr == nullptr) return fromNative(slimecclSuccess);
  return refuse(ncclInvalidUsage, "MemFree: this libnccl was built without CUDA");
#endif
}

NCCL_API ncclResult_t ncclGroupStart(void) {
  const ncclResult_t rc = fromNative(slimecclGroupStart());
  if (rc == ncclSuccess) groupOpened();
  return rc;
}

// The inits the group deferred run first: its ops may be on those comms.
NCCL_API ncclResult_t ncclGroupEnd(void) {
  const ncclResult_t inits = groupClosing();
  const slimecclResult_t ops = slimecclGroupEnd();
  // A failed init keeps its sentence as the thread's last error.
  return inits != ncclSuccess ? inits : fromNative(ops);
}

// slimeccl cannot end a group without running it; the group stays open for ncclGroupEnd.
NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  (void)simInfo;
  return refuse(ncclInvalidUsage,
                "GroupSimulateEnd: slimeccl cannot estimate a group without running it; the group stays open, end it "
                "with ncclGroupEnd");
}

PROFILING_NAME(ncclGetVersion)
PROFILING_NAME(ncclGetUniqueId)
PROFILING_NAME(ncclCommInitRankConfig)
PROFILING_NAME(ncclCommInitRank)
PROFILING_NAME(ncclCommInitRankScalable)
PROFILING_NAME(ncclCommInitAll)
PROFILING_NAME(ncclCommFinalize)
PROFILING_NAME(ncclCommDestroy)
PROFILING_NAME(ncclCommAbort)
PROFILING_NAME(ncclCommRevoke)
PROFILING_NAME(ncclCommSplit)
PROFILING_NAME(ncclCommShrink)
PROFILING_NAME(ncclGetErrorString)
PROFILING_NAME(ncclGetLastError)
PROFILING_NAME(ncclResetDebugInit)
PROFILING_NAME(ncclCommGetAsyncError)
PROFILING_NAME(ncclCommCount)
PROFILING_NAME(ncclCommUserRank)
PROFILING_NAME(ncclCommCuDevice)
PROFILING_NAME(ncclCommRegister)
PROFILING_NAME(ncclCommDeregister)
PROFILING_NAME(ncclCommWindowRegister)
PROFILING_NAME(ncclCommWindowDeregister)
PROFILING_NAME(ncclMemAlloc)
PROFILING_NAME(ncclMemFree)
PROFILING_NAME(ncclGroupStart)
PROFILING_NAME(ncclGroupEnd)
PROFILING_NAME(ncclGroupSimulateEnd)
