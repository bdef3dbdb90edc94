// Communicator lifecycle entry points.
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "src/api/boundary.h"
#include "src/bootstrap/unique_id.h"
#include "src/comm_shrink.h"
#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/device/gpu_direct.h"
#include "src/exec/submit.h"
#include "src/init.h"
#include "src/base/param.h"

using namespace slimeccl;

namespace {

slimecclResult_t checkInitArgs(slimecclComm_t* comm, int nranks, int rank, const char* opName) {
  if (comm == nullptr) return fail(slimecclInvalidArgument, "{}: the comm output pointer is NULL", opName);
  if (nranks < 1 || nranks > kMaxRanks)
    return fail(slimecclInvalidArgument, "{}: nranks {} is out of range (1..{})", opName, nranks, kMaxRanks);
  if (rank < 0 || rank >= nranks)
    return fail(slimecclInvalidArgument, "{}: rank {} is out of range (nranks {})", opName, rank, nranks);
  return slimecclSuccess;
}

slimecclResult_t initRank(slimecclComm_t* comm, int nranks, slimecclUniqueId commId, int rank, slimecclConfig_t* config,
                          const char* opName) {
  SLIMECCL_CHECK(checkInitArgs(comm, nranks, rank, opName));
  *comm = nullptr;
  SLIMECCL_CHECK(checkConfig(config, opName));
  UniqueIdContents id;
  slimecclResult_t rc = decodeUniqueId(commId, &id);
  if (rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: {}: ", rank, opName));
    return rc;
  }
  return commInitRank(comm, nranks, id, rank, config);
}

// Holds threads until all of them exist, then lets them go or sends them home.
class StartGate {
 public:
  bool waitForGo() {
    std::unique_lock<std::mutex> lock(mutex_);
    opened_.wait(lock, [this] { return state_ != State::Closed; });
    return state_ == State::Go;
  }
  void open(bool go) {
    std::lock_guard<std::mutex> lock(mutex_);
    state_ = go ? State::Go : State::Cancel;
    opened_.notify_all();
  }

 private:
  enum class State { Closed, Go, Cancel };
  std::mutex mutex_;
  std::condition_variable opened_;
  State state_ = State::Closed;
};

// An AllGatherOverlap op ends only after its callback returns, so a callback that waited for the
// comm's ops would wait for itself.
slimecclResult_t checkNotInCallback(slimecclComm_t comm, const char* opName) {
  SLIMECCL_CHECK(checkNotQueuingBlocks(comm, opName));
  if (comm->callbackWorker.isCurrentThread())
    return fail(slimecclInvalidUsage,
                "rank {}: {}: called from an AllGatherOverlap callback of this communicator, whose op ends only "
                "after the callback returns; call it from another thread",
                comm->rank, opName);
  return slimecclSuccess;
}

// Destroy and Finalize wait for the comm's pending ops; those of the caller's own open group end
// only at its slimecclGroupEnd, so waiting for them would never end.
slimecclResult_t checkCallerHoldsNoOps(slimecclComm_t comm, const char* opName) {
  SLIMECCL_CHECK(checkNotInCallback(comm, opName));
  if (size_t queued = openGroupOpsOf(comm))
    return fail(slimecclInvalidUsage,
                "rank {}: {}: {} op(s) of this communicator wait in the calling thread's open group; call "
                "slimecclGroupEnd first (or slimecclCommAbort to drop them)",
                comm->rank, opName, queued);
  return slimecclSuccess;
}

}  // namespace

SLIMECCL_API slimecclResult_t slimecclGetUniqueId(slimecclUniqueId* uniqueId) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (uniqueId == nullptr) return fail(slimecclInvalidArgument, "slimecclGetUniqueId: uniqueId is NULL");
    UniqueIdContents id;
    std::string commId = envString("SLIMECCL_COMM_ID");
    if (!commId.empty())
      SLIMECCL_CHECK(uniqueIdFromEnv(commId.c_str(), &id));
    else
      SLIMECCL_CHECK(makeLocalUniqueId(&id));
    encodeUniqueId(id, uniqueId);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommInitRank(slimecclComm_t* comm, int nranks, slimecclUniqueId commId,
                                                   int rank) {
  SLIMECCL_API_BODY(nullptr, [&] { return initRank(comm, nranks, commId, rank, nullptr, "CommInitRank"); });
}

SLIMECCL_API slimecclResult_t slimecclCommInitRankConfig(slimecclComm_t* comm, int nranks, slimecclUniqueId commId,
                                                         int rank, slimecclConfig_t* config) {
  SLIMECCL_API_BODY(nullptr, [&] { return initRank(comm, nranks, commId, rank, config, "CommInitRankConfig"); });
}

SLIMECCL_API slimecclResult_t slimecclCommInitAll(slimecclComm_t* comms, int nranks, const int* devlist) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (comms == nullptr) return fail(slimecclInvalidArgument, "CommInitAll: comms is NULL");
    if (nranks < 1 || nranks > kMaxRanks)
      return fail(slimecclInvalidArgument, "CommInitAll: nranks {} is out of range (1..{})", nranks, kMaxRanks);
    // The device list names each rank's GPU, as NCCL's does; without a GPU it must be NULL.
    for (int r = 0; devlist != nullptr && r < nranks; ++r)
      if (devlist[r] < 0 || devlist[r] >= gpuCount())
        return fail(slimecclInvalidArgument, "CommInitAll: devlist[{}] = {} is not a GPU of this process ({} GPUs{}{})",
                    r, devlist[r], gpuCount(), gpuPresent() ? "" : ": ", gpuAbsence());
    UniqueIdContents id;
    SLIMECCL_CHECK(makeLocalUniqueId(&id));
    std::vector<slimecclResult_t> results(nranks, slimecclSuccess);
    std::vector<std::string> errors(nranks);
    for (int r = 0; r < nranks; ++r) comms[r] = nullptr;
    // The ranks start together once every thread exists: a rank started alone would wait for the
    // others until the timeout if a later thread could not be created.
    StartGate gate;
    std::vector<std::thread> threads;
    threads.reserve(nranks);
    try {
      for (int r = 0; r < nranks; ++r)
        threads.emplace_back([&, r] {
          if (!gate.waitForGo()) return;
          try {
            results[r] = commInitRank(&comms[r], nranks, id, r, nullptr);
            // NCCL's NULL device list means GPUs 0 to nranks - 1.
            const int device = devlist != nullptr ? devlist[r] : (r < gpuCount() ? r : -1);
            if (results[r] == slimecclSuccess) results[r] = setUpGpuDirectAtInit(comms[r], device);
          } catch (const std::exception& e) {
            results[r] = fail(slimecclSystemError, "rank {}: CommInitAll: {}", r, e.what());
          }
          errors[r] = threadError();
        });
    } catch (const std::system_error& e) {
      gate.open(false);
      for (auto& t : threads) t.join();
      return fail(slimecclSystemError, "CommInitAll: cannot start the thread of rank {} of {}: {}", threads.size(),
                  nranks, e.what());
    }
    gate.open(true);
    for (auto& t : threads) t.join();
    for (int r = 0; r < nranks; ++r) {
      if (results[r] == slimecclSuccess) continue;
      for (int k = 0; k < nranks; ++k) {
        if (comms[k] == nullptr) continue;
        commRelease(comms[k]);
        delete comms[k];
        comms[k] = nullptr;
      }
      return setError(results[r], errors[r]);
    }
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommSplit(slimecclComm_t comm, int color, int key, slimecclComm_t* newcomm,
                                                slimecclConfig_t* config) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(commUsable(comm, "CommSplit"));
    slimecclResult_t refusal = slimecclSuccess;
    if (newcomm == nullptr) {
      refusal = fail(slimecclInvalidArgument, "rank {}: CommSplit: newcomm is NULL", comm->rank);
    } else if (color < 0 && color != SLIMECCL_SPLIT_NOCOLOR) {
      refusal = fail(slimecclInvalidArgument, "rank {}: CommSplit: color {} is negative (use SLIMECCL_SPLIT_NOCOLOR)",
                     comm->rank, color);
    } else {
      refusal = checkConfig(config, "CommSplit");
    }
    return commSplit(comm, color, key, newcomm, config, refusal);
  });
}

SLIMECCL_API slimecclResult_t slimecclCommShrink(slimecclComm_t comm, const int* excludeRanks, int excludeCount,
                                                 slimecclComm_t* newcomm, slimecclConfig_t* config) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(commUsable(comm, "CommShrink"));
    if (newcomm == nullptr) return fail(slimecclInvalidArgument, "rank {}: CommShrink: newcomm is NULL", comm->rank);
    *newcomm = nullptr;
    if (excludeCount < 0 || (excludeCount > 0 && excludeRanks == nullptr))
      return fail(slimecclInvalidArgument, "rank {}: CommShrink: the list of {} excluded ranks is missing", comm->rank,
                  excludeCount);
    SLIMECCL_CHECK(checkConfig(config, "CommShrink"));
    return commShrink(comm, excludeRanks, excludeCount, newcomm, config);
  });
}

SLIMECCL_API slimecclResult_t slimecclCommFinalize(slimecclComm_t comm) {
  SLIMECCL_API_BODY(comm, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommFinalize"));
    SLIMECCL_CHECK(checkCallerHoldsNoOps(comm, "CommFinalize"));
    waitForPendingOps(comm);
    waitForHostTierOps(comm);
    comm->finalized.store(true);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommDestroy(slimecclComm_t comm) {
  SLIMECCL_API_BODY(nullptr, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommDestroy"));
    SLIMECCL_CHECK(checkCallerHoldsNoOps(comm, "CommDestroy"));
    commEnd(comm);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommAbort(slimecclComm_t comm) {
  SLIMECCL_API_BODY(nullptr, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommAbort"));
    SLIMECCL_CHECK(checkNotInCallback(comm, "CommAbort"));
    dropOpenGroupOps(comm, fmt::format("rank {}: the communicator was aborted before slimecclGroupEnd", comm->rank));
    commSignalAbort(comm);
    commEnd(comm);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommGetAsyncError(slimecclComm_t comm, slimecclResult_t* asyncError) {
  SLIMECCL_API_BODY(comm, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommGetAsyncError"));
    if (asyncError == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: CommGetAsyncError: asyncError is NULL", comm->rank);
    adoptHostTierFailure(comm);
    *asyncError = static_cast<slimecclResult_t>(comm->asyncError.load());
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommCount(const slimecclComm_t comm, int* count) {
  SLIMECCL_API_BODY(comm, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommCount"));
    if (count == nullptr) return fail(slimecclInvalidArgument, "rank {}: CommCount: count is NULL", comm->rank);
    *count = comm->nranks;
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommUserRank(const slimecclComm_t comm, int* rank) {
  SLIMECCL_API_BODY(comm, [&] {
    SLIMECCL_CHECK(checkCommArg(comm, "CommUserRank"));
    if (rank == nullptr) return fail(slimecclInvalidArgument, "rank {}: CommUserRank: rank is NULL", comm->rank);
    *rank = comm->rank;
    return slimecclSuccess;
  });
}
