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

// The way the ops must have gone: GPU to GPU (the watchdog lets the stream go), or through host
// staging in pinned chunks (the stream's worker does).
enum class KilledPeerRoute { kGpuToGpu, kStagedChunks };

// What one rank's child runs between init and the end of its comm: queue ops on `stream` (over
// `cuda`); the victim (the last rank) is killed once it returns.
using KilledPeerOps = std::function<void(int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t cuda)>;

// A rank's part, in a child of its own: a survivor's stream must drain within 15 s after its ops,
// with slimecclRemoteError naming the dead rank (or the survivor that found it dead first), by
// `route`, its GPU still usable.
[[noreturn]] inline void killed_peer_rank(int rank, const slimecclUniqueId& id, const KilledPeerOps& ops,
                                          KilledPeerRoute route) {
  cudaSetDevice(rank);
  slimecclComm_t comm;
  if (slimecclCommInitRank(&comm, kRanks, id, rank) != slimecclSuccess) _exit(3);
  cudaStream_t cuda;
  slimecclStream_t stream;
  cudaStreamCreateWithFlags(&cuda, cudaStreamNonBlocking);
  if (slimecclStreamCreateFromCuda(&stream, cuda) != slimecclSuccess) _exit(3);
  ops(rank, comm, stream, cuda);
  if (rank == kRanks - 1) raise(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  if (cudaStreamSynchronize(cuda) != cudaSuccess) _exit(5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  slimecclResult_t async = slimecclSuccess;
  slimecclCommGetAsyncError(comm, &async);
  const std::string why = slimecclGetLastError(comm);
  void* probe = nullptr;
  const bool usable = cudaMalloc(&probe, 64) == cudaSuccess && cudaMemset(probe, 0, 64) == cudaSuccess;
  // The ops went the way asked: GPU to GPU (the watchdog, not host staging, had to let the stream
  // go), or in pinned chunks.
  slimecclDevicePathInfo info{};
  slimecclCommGetDevicePathInfo(comm, &info);
  fprintf(stderr, "survivor %d: drained in %.2f s, async error %d: %s; %llu ops GPU to GPU, %llu chunks staged\n",
          rank, seconds, async, why.c_str(), info.opsGpuToGpu, info.stagedChunks);
  slimecclCommAbort(comm);
  const bool routeTaken = route == KilledPeerRoute::kGpuToGpu
                              ? info.gpuToGpu == 1 && info.opsGpuToGpu >= 1 && info.opsStaged == 0
                              : info.stagingPinned == 1 && info.stagedChunks >= 1 && info.opsGpuToGpu == 0;
  // GPU to GPU the watchdog names the dead peer's process; staged, the link that broke names it.
  const std::string dead = "peer " + std::to_string(kRanks - 1) + (route == KilledPeerRoute::kGpuToGpu ? " (pid" : " ");
  const bool named = why.find(dead) != std::string::npos;
  const bool told = why.find("communicator failed (its error names the cause)") != std::string::npos;
  if (async != slimecclRemoteError || !usable || !routeTaken || seconds >= 15) _exit(6);
  _exit(named ? 0 : told ? kToldBySurvivor : 6);
}

// Forks every rank (before this process touches CUDA), the last to be killed, and checks how each
// ended: the victim by SIGKILL, the survivors as killed_peer_rank says, at least one naming it.
inline void run_with_killed_peer(const KilledPeerOps& ops, KilledPeerRoute route = KilledPeerRoute::kGpuToGpu) {
  setenv("SLIMECCL_TIMEOUT_MS", "20000", 1);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::vector<pid_t> children;
  for (int rank = 1; rank < kRanks; ++rank) {
    const pid_t child = fork();
    if (child == 0) {
      close(pipefd[1]);
      slimecclUniqueId id;
      if (read(pipefd[0], &id, sizeof(id)) != sizeof(id)) _exit(2);
      killed_peer_rank(rank, id, ops, route);
    }
    children.push_back(child);
  }
  close(pipefd[0]);
  const pid_t first = fork();
  if (first == 0) {
    slimecclUniqueId id;
    if (slimecclGetUniqueId(&id) != slimecclSuccess) _exit(2);
    for (int rank = 1; rank < kRanks; ++rank)
      if (write(pipefd[1], &id, sizeof(id)) != sizeof(id)) _exit(2);
    killed_peer_rank(0, id, ops, route);
  }
  close(pipefd[1]);
  children.insert(children.begin(), first);
  int naming = 0;
  for (int rank = 0; rank < kRanks; ++rank) {
    int status = 0;
    ASSERT_EQ(waitpid(children[rank], &status, 0), children[rank]);
    if (rank == kRanks - 1) {
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
