// A process that uses one GPU makes no context on any other: the library's threads (a stream's
// worker, which runs the staged copies) keep their stream's GPU instead of switching back to GPU 0
// after each copy. Each rank is a process of its own on GPU `rank`; after ops through host staging
// on a CUDA stream, the primary context of every other GPU must still be inactive. Needs 2 GPUs.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "gpu_ranks.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// Whether GPU `device`'s primary context is active in this process, through the driver entry point
// the runtime hands out (the test links no driver library).
bool primaryContextActive(int device) {
  using GetState = CUresult (*)(CUdevice, unsigned int*, int*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_RANK_CHECK(
      cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &fn, 12000, cudaEnableDefault, &found));
  RANK_CHECK(fn != nullptr && found == cudaDriverEntryPointSuccess, "no cuDevicePrimaryCtxGetState");
  unsigned int flags = 0;
  int active = 0;
  RANK_CHECK(reinterpret_cast<GetState>(fn)(device, &flags, &active) == CUDA_SUCCESS, "cuDevicePrimaryCtxGetState");
  return active != 0;
}

TEST(DeviceContexts, StagedOpsMakeNoContextOnAnotherGpu) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GPU_DIRECT"] = "0";
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 1 << 20;
        Ints send(count), recv(count * kRanks);
        send.write(std::vector<int32_t>(count, rank + 1));
        for (int call = 0; call < 3; ++call) {
          RANK_CHECK_SUCCESS(
              slimecclAllReduce(send.data, recv.data, count, slimecclInt32, slimecclSum, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
        }
        gpu.sync();
        RANK_CHECK(pathOf(comm).opsStaged >= 6, "the ops did not take host staging");
        const int mine = rank % usableGpus();
        for (int other = 0; other < usableGpus(); ++other)
          RANK_CHECK(other == mine || !primaryContextActive(other), "rank ", rank, " on GPU ", mine,
                     " has a context on GPU ", other);
      },
      options);
}

}  // namespace
}  // namespace slimeccl_test
