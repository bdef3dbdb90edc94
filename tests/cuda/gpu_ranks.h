// What the GPU-to-GPU suites share: how many GPUs can be used, the rank count they run
// (SLIMECCL_TEST_GPUS, default 2), a rank's GPU and stream, int32 device buffers, and the comm's
// device path counters.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <slimeccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "device_values.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {

// Asked in a child: a parent that had touched CUDA could not fork ranks that use it.
inline int usableGpus() {
  static const int count = [] {
    int pipefd[2];
    if (pipe(pipefd) != 0) return 0;
    const pid_t child = fork();
    if (child == 0) {
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
      (void)!write(pipefd[1], &n, sizeof(n));
      _exit(0);
    }
    close(pipefd[1]);
    int n = 0;
    if (read(pipefd[0], &n, sizeof(n)) != sizeof(n)) n = 0;
    close(pipefd[0]);
    waitpid(child, nullptr, 0);
    return n;
  }();
  return count;
}

inline int testRanks() {
  const char* set = getenv("SLIMECCL_TEST_GPUS");
  return set != nullptr && atoi(set) > 2 ? atoi(set) : 2;
}
inline const int kRanks = testRanks();

#define SKIP_WITHOUT_GPUS() \
  if (usableGpus() < kRanks) GTEST_SKIP() << "needs " << kRanks << " GPUs, " << usableGpus() << " usable here"
// For routes through host memory, whose ranks may share one GPU.
#define SKIP_WITHOUT_A_GPU() \
  if (usableGpus() < 1) GTEST_SKIP() << "needs a GPU, none usable here"

// A rank's GPU, a CUDA stream on it and the slimeccl stream in its order.
struct RankGpu {
  cudaStream_t cuda = nullptr;
  slimecclStream_t stream = nullptr;
  // onLegacyStream: the ops go on the legacy default stream (0), as PyTorch's default stream is.
  explicit RankGpu(int rank, bool onLegacyStream = false) {
    CUDA_RANK_CHECK(cudaSetDevice(rank % usableGpus()));
    if (!onLegacyStream) CUDA_RANK_CHECK(cudaStreamCreateWithFlags(&cuda, cudaStreamNonBlocking));
    RANK_CHECK_SUCCESS(slimecclStreamCreateFromCuda(&stream, cuda), nullptr);
  }
  ~RankGpu() {
    cudaStreamSynchronize(cuda);
    slimecclStreamDestroy(stream);
    if (cuda != nullptr) cudaStreamDestroy(cuda);
  }
  void sync() { CUDA_RANK_CHECK(cudaStreamSynchronize(cuda)); }
};

struct Ints {
  int32_t* data = nullptr;
  size_t count;
  explicit Ints(size_t n) : count(n) {
    CUDA_RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), std::max<size_t>(n, 1) * sizeof(int32_t)));
    CUDA_RANK_CHECK(cudaMemset(data, 0xee, n * sizeof(int32_t)));
    CUDA_RANK_CHECK(cudaDeviceSynchronize());
  }
  ~Ints() { cudaFree(data); }
  // A cudaMemcpy from pageable memory may return before its last bytes land, and ops on a
  // CUDA-ordered stream do not wait for the legacy stream: wait for them here.
  void write(const std::vector<int32_t>& v, size_t at = 0) {
    CUDA_RANK_CHECK(cudaMemcpy(data + at, v.data(), v.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    CUDA_RANK_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  std::vector<int32_t> read() const {
    std::vector<int32_t> v(count);
    CUDA_RANK_CHECK(cudaMemcpy(v.data(), data, count * sizeof(int32_t), cudaMemcpyDeviceToHost));
    return v;
  }
};

// Device memory of `bytes`, filled with 0xee, written and read through copies.
struct DeviceBytes {
  char* data = nullptr;
  size_t bytes;
  explicit DeviceBytes(size_t n) : bytes(n) {
    CUDA_RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), std::max<size_t>(n, 1)));
    CUDA_RANK_CHECK(cudaMemset(data, 0xee, n));
    CUDA_RANK_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  ~DeviceBytes() { cudaFree(data); }
  // A cudaMemcpy from pageable memory may return before its last bytes land, and the ops run on a
  // stream that does not wait for the legacy stream: wait for them here.
  void write(const std::vector<char>& host, size_t at = 0) {
    CUDA_RANK_CHECK(cudaMemcpy(data + at, host.data(), host.size(), cudaMemcpyHostToDevice));
    CUDA_RANK_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  std::vector<char> read(size_t at, size_t n) const {
    std::vector<char> host(n);
    CUDA_RANK_CHECK(cudaMemcpy(host.data(), data + at, n, cudaMemcpyDeviceToHost));
    return host;
  }
};

// Holds back the work queued on the rank's stream after this by `seconds` of host work: the rank's next
// op reaches its GPU late, and its peers' streams wait for it.
inline void reachTheNextOpLate(const RankGpu& gpu, int seconds = 3) {
  CUDA_RANK_CHECK(cudaLaunchHostFunc(
      gpu.cuda, [](void* late) { std::this_thread::sleep_for(std::chrono::seconds(reinterpret_cast<intptr_t>(late))); },
      reinterpret_cast<void*>(static_cast<intptr_t>(seconds))));
}

// An abort test's waiting rank: 300 ms after its op its stream still waits for `late` (the peer
// that reachTheNextOpLate held back); slimecclCommAbort lets it go within 1.5 s, and the GPU
// still takes work after it.
inline void abortReleasesTheWaitingStream(slimecclComm_t comm, const RankGpu& gpu, const char* late) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  RANK_CHECK(cudaStreamQuery(gpu.cuda) == cudaErrorNotReady, "the stream should wait for ", late);
  const auto start = std::chrono::steady_clock::now();
  RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
  CUDA_RANK_CHECK(cudaStreamSynchronize(gpu.cuda));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RANK_CHECK(seconds < 1.5, "abort released the stream after ", seconds, " s");
  void* probe = nullptr;
  CUDA_RANK_CHECK(cudaMalloc(&probe, 64));
  CUDA_RANK_CHECK(cudaMemset(probe, 0, 64));
  CUDA_RANK_CHECK(cudaFree(probe));
}

// How every rank of an abort test ends once its op is queued: rank 0 aborts while its stream waits
// for the late peer (abortReleasesTheWaitingStream, `late` naming it); the others abort once
// their streams are done. Peers' streams may still copy into a rank's buffers after its abort, so
// every rank keeps them 4 s longer.
inline void endAbortTest(slimecclComm_t comm, const RankGpu& gpu, int rank, const char* late) {
  if (rank == 0) {
    abortReleasesTheWaitingStream(comm, gpu, late);
  } else {
    CUDA_RANK_CHECK(cudaStreamSynchronize(gpu.cuda));
    RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
  }
  std::this_thread::sleep_for(std::chrono::seconds(4));
}

// Options for the suites of the GPU path's other routes (copy engines, the copy kernel, the reduction
// kernels), which they check op by op: small ops then take no flagged lines
// (SLIMECCL_GPU_LINE_BYTES=0), which have a suite of their own (line_ops_test.cc).
inline RunOptions linesOff(RunOptions options = {}) {
  options.env["SLIMECCL_GPU_LINE_BYTES"] = "0";
  return options;
}

// Runs `body` in a child with `env` set (a process that used CUDA cannot fork the ranks of later
// tests); the test fails unless it exits 0, within 110 s (a hang ends it with SIGALRM, before ctest's 120 s).
inline void inChild(const std::map<std::string, std::string>& env, const std::function<int()>& body) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(110);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    _exit(body());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exit status " << status;
}

inline slimecclDevicePathInfo pathOf(slimecclComm_t comm) {
  slimecclDevicePathInfo info{};
  RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
  return info;
}

}  // namespace slimeccl_test
