#include "compat/nccl/group_init.h"

#include <string>
#include <thread>
#include <vector>

#include "compat/nccl/compat.h"

#if SLIMECCL_NCCL_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace slimeccl_nccl {
namespace {

struct DeferredInit {
  ncclComm_t comm;
  int nranks, rank;
  slimecclUniqueId id;
  slimecclConfig_t config;
  std::string netName, commName;  // the config's strings, which the caller may free before the end
};

thread_local int groupDepth = 0;
thread_local std::vector<DeferredInit> deferred;

slimecclResult_t runInit(DeferredInit& init) {
#if SLIMECCL_NCCL_WITH_CUDA
  if (init.comm->device >= 0) cudaSetDevice(init.comm->device);
#endif
  init.config.netName = init.config.netName != nullptr ? init.netName.c_str() : nullptr;
  init.config.commName = init.config.commName != nullptr ? init.commName.c_str() : nullptr;
  return slimecclCommInitRankConfig(&init.comm->native, init.nranks, init.id, init.rank, &init.config);
}

}  // namespace

void groupOpened() { ++groupDepth; }

bool deferInit(ncclComm_t comm, int nranks, const slimecclUniqueId& id, int rank, const slimecclConfig_t& config) {
  if (groupDepth == 0) return false;
  DeferredInit init{comm, nranks, rank, id, config, config.netName != nullptr ? config.netName : "",
                    config.commName != nullptr ? config.commName : ""};
  deferred.push_back(std::move(init));
  return true;
}

ncclResult_t groupClosing() {
  if (groupDepth > 0) --groupDepth;
  if (groupDepth > 0 || deferred.empty()) return ncclSuccess;
  std::vector<DeferredInit> inits;
  inits.swap(deferred);
  std::vector<slimecclResult_t> results(inits.size(), slimecclSuccess);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inits.size(); ++i) threads.emplace_back([&, i] { results[i] = runInit(inits[i]); });
  for (std::thread& t : threads) t.join();
  for (slimecclResult_t rc : results)
    if (rc != slimecclSuccess) return fromNative(rc);
  return fromNative(slimecclSuccess);
}

}  // namespace slimeccl_nccl
