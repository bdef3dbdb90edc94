#include "compat/nccl/group_init.h"

#include <string>
#include <thread>
#include <vector>

#include "compat/nccl/compat.h"
#include "compat/nccl/last_error.h"

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
  ScopedDevice on(init.comm->device);
  init.config.netName = init.config.netName != nullptr ? init.netName.c_str() : nullptr;
  init.config.commName = init.config.commName != nullptr ? init.commName.c_str() : nullptr;
  return slimecclCommInitRankConfig(&init.comm->native, init.nranks, init.id, init.rank, &init.config);
}

}  // namespace

void groupOpened() { ++groupDepth; }

bool insideGroup() { return groupDepth > 0; }

bool deferInit(ncclComm_t comm, int nranks, const slimecclUniqueId& id, int rank, const slimecclConfig_t& config) {
  if (groupDepth == 0) return false;
  DeferredInit init{comm,
                    nranks,
                    rank,
                    id,
                    config,
                    config.netName != nullptr ? config.netName : "",
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
  std::vector<std::string> errors(inits.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inits.size(); ++i)
    threads.emplace_back([&, i] {
      results[i] = runInit(inits[i]);
      if (results[i] != slimecclSuccess) errors[i] = slimecclGetLastError(nullptr);
    });
  for (std::thread& t : threads) t.join();
  // Each comm keeps how its init went: the sentence was the worker thread's.
  ncclResult_t first = ncclSuccess;
  for (size_t i = 0; i < inits.size(); ++i) {
    if (results[i] == slimecclSuccess) continue;
    inits[i].comm->initResult = fromNative(results[i]);
    inits[i].comm->initError = errors[i];
    if (first == ncclSuccess) {
      first = inits[i].comm->initResult;
      recordRefusal(errors[i]);
    }
  }
  if (first == ncclSuccess) forgetRefusal();
  return first;
}

}  // namespace slimeccl_nccl
