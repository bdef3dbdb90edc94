// A peer killed with SIGKILL in the middle of GPU-to-GPU or staged ops: each rank in a child of its own, the
// last one killed while its ops run; each survivor reports how its comm ended through its exit
// code. Shared by the suites whose ops must release a survivor's stream when a peer dies.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <slimeccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpu_ranks.h"

namespace slimeccl_test {

// A survivor's exit code when it learned of the death from another survivor.
constexpr int kToldBySurvivor = 7;

// The way the ops must have gone: GPU to GPU (the watchdog lets the stream go), through host
// staging in pinned chunks (the stream's worker does), or as AllGathers in host tiers (both).
enum class KilledPeerRoute { kGpuToGpu, kStagedChunks, kHostTiers };

// What one rank's child runs between init and the end of its comm: queue ops on `stream` (over
// `cuda`); the victim (the last rank) is killed once it returns.
using KilledPeerOps = std::function<void(int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t cuda)>;

struct KilledPeerRun {
  KilledPeerRoute route = KilledPeerRoute::kGpuToGpu;
  int nranks = kRanks;   // on GPUs rank % the GPU count
  int ranksPerHost = 0;  // > 0: ranks r * ranksPerHost .. claim one host (SLIMECCL_HOSTID) each
};

// Whether the survivor's sentence names the victim, the way `route` names it: GPU to GPU the
// watchdog names the dead peer's process; staged, the link that broke names it; in host tiers,
// the tier's peer that died, with the map of the tier's ranks that ends at the victim.
inline bool namesVictim(const std::string& why, const KilledPeerRun& run) {
  const int victim = run.nranks - 1;
  switch (run.route) {
    case KilledPeerRoute::kGpuToGpu: return why.find("peer " + std::to_string(victim) + " (pid") != std::string::npos;
    case KilledPeerRoute::kStagedChunks: return why.find("peer " + std::to_string(victim) + " ") != std::string::npos;
    case KilledPeerRoute::kHostTiers:
      return why.find("in host tiers") != std::string::npos &&
             why.find(", " + std::to_string(victim) + " here") != std::string::npos &&
             why.find("peer 1") != std::string::npos;
  }
  return false;
}

// Whether the survivor learned of the death from another survivor: through that one's failure
// word, or, in host tiers, from a tier link that a survivor closed because its other tier had
// failed (the sentence then maps the tier's ranks to a survivor, not to the victim). A socket closed
// with bytes unread reads as reset rather than closed.
inline bool toldBySurvivor(const std::string& why, const KilledPeerRun& run) {
  if (why.find("communicator failed (its error names the cause)") != std::string::npos) return true;
  if (run.route != KilledPeerRoute::kHostTiers || why.find("in host tiers") == std::string::npos) return false;
  const bool closed =
      why.find("closed the connection") != std::string::npos || why.find("reset by peer") != std::string::npos;
  return closed && why.find(", " + std::to_string(run.nranks - 1) + " here") == std::string::npos;
}

inline bool tookRoute(const slimecclDevicePathInfo& info, KilledPeerRoute route) {
  switch (route) {
    case KilledPeerRoute::kGpuToGpu: return info.gpuToGpu == 1 && info.opsGpuToGpu >= 1 && info.opsStaged == 0;
    case KilledPeerRoute::kStagedChunks:
      return info.stagingPinned == 1 && info.stagedChunks >= 1 && info.opsGpuToGpu == 0;
    case KilledPeerRoute::kHostTiers:
      return info.hostTiers == 1 && info.tieredAllGathers >= 1 && info.opsGpuToGpu >= 1 && info.stagedChunks >= 1;
  }
  return false;
}

// A rank's part, in a child of its own: a survivor's stream must drain within 15 s after its ops,
// with slimecclRemoteError naming the dead rank (or the survivor that found it dead first), by
// the run's route, its GPU still usable.
[[noreturn]] inline void killedPeerRank(int rank, const slimecclUniqueId& id, const KilledPeerOps& ops,
                                        const KilledPeerRun& run) {
  if (run.ranksPerHost > 0)
    setenv("SLIMECCL_HOSTID", ("killed-peer-host-" + std::to_string(rank / run.ranksPerHost)).c_str(), 1);
  cudaSetDevice(rank % usableGpus());
  // The rank uses its GPU before init, so comms across hosts take host tiers.
  cudaFree(nullptr);
  slimecclComm_t comm;
  if (slimecclCommInitRank(&comm, run.nranks, id, rank) != slimecclSuccess) _exit(3);
  cudaStream_t cuda;
  slimecclStream_t stream;
  cudaStreamCreateWithFlags(&cuda, cudaStreamNonBlocking);
  if (slimecclStreamCreateFromCuda(&stream, cuda) != slimecclSuccess) _exit(3);
  ops(rank, comm, stream, cuda);
  if (rank == run.nranks - 1) raise(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  if (cudaStreamSynchronize(cuda) != cudaSuccess) _exit(5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  slimecclResult_t async = slimecclSuccess;
  slimecclCommGetAsyncError(comm, &async);
  const std::string why = slimecclGetLastError(comm);
  void* probe = nullptr;
  const bool usable = cudaMalloc(&probe, 64) == cudaSuccess && cudaMemset(probe, 0, 64) == cudaSuccess;
  slimecclDevicePathInfo info{};
  slimecclCommGetDevicePathInfo(comm, &info);
  fprintf(stderr, "survivor %d: drained in %.2f s, async error %d: %s; %llu ops GPU to GPU, %llu chunks staged\n", rank,
          seconds, async, why.c_str(), info.opsGpuToGpu, info.stagedChunks);
  slimecclCommAbort(comm);
  const bool told = toldBySurvivor(why, run);
  if (async != slimecclRemoteError || !usable || !tookRoute(info, run.route) || seconds >= 15) _exit(6);
  _exit(namesVictim(why, run) ? 0 : told ? kToldBySurvivor : 6);
}

// Forks every rank (before this process touches CUDA), the last to be killed, and checks how each
// ended: the victim by SIGKILL, the survivors as killedPeerRank says, at least one naming it.
inline void runWithKilledPeer(const KilledPeerOps& ops, const KilledPeerRun& run = {}) {
  setenv("SLIMECCL_TIMEOUT_MS", "20000", 1);
  const int nranks = run.nranks;
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::vector<pid_t> children;
  for (int rank = 1; rank < nranks; ++rank) {
    const pid_t child = fork();
    if (child == 0) {
      close(pipefd[1]);
      slimecclUniqueId id;
      if (read(pipefd[0], &id, sizeof(id)) != sizeof(id)) _exit(2);
      killedPeerRank(rank, id, ops, run);
    }
    children.push_back(child);
  }
  close(pipefd[0]);
  const pid_t first = fork();
  if (first == 0) {
    slimecclUniqueId id;
    if (slimecclGetUniqueId(&id) != slimecclSuccess) _exit(2);
    for (int rank = 1; rank < nranks; ++rank)
      if (write(pipefd[1], &id, sizeof(id)) != sizeof(id)) _exit(2);
    killedPeerRank(0, id, ops, run);
  }
  close(pipefd[1]);
  children.insert(children.begin(), first);
  int naming = 0;
  for (int rank = 0; rank < nranks; ++rank) {
    int status = 0;
    ASSERT_EQ(waitpid(children[rank], &status, 0), children[rank]);
    if (rank == nranks - 1) {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the victim should die by SIGKILL";
      continue;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT_TRUE(code == 0 || code == kToldBySurvivor) << "survivor " << rank << " exit status " << status;
    naming += code == 0;
  }
  EXPECT_GE(naming, 1) << "no survivor named the dead rank";
}

}  // namespace slimeccl_test
