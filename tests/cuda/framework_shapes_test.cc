// Device buffers driven the way frameworks drive NCCL, on each route device buffers can take: a
// non-blocking CUDA stream of the rank's own, held back by host work so that ops queue while it
// waits; ops inside GroupStart/End issued from a thread other than the one that made the comm; a
// second comm on the same GPU whose stream waits on the first through an event; and, while the
// ops are in flight, the application allocating, freeing (cudaFree waits for the whole GPU) and
// synchronising the device. Every op's data is checked, and so is its route. Ranks are forked
// processes that share the machine's GPUs, so the routes through host memory (staging and the host
// relays) run on one GPU.
// Also: a capture refused for an op through host memory, and one thread driving two ranks whose
// parts of a group cannot be queued on their CUDA streams.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gpu_ranks.h"
#include "harness.h"

namespace slimeccl_test {
namespace {

constexpr size_t kLargeCount = 589829;  // 2.25 MiB of int32: several 1 MiB chunks
constexpr size_t kSmallCount = 4099;
constexpr int kIterations = 3;

enum class Route { kStagedChunks, kWholeOpStaging, kGpuToGpu, kHostRelays };

struct RouteCase {
  Route route;
  const char* name;
};

RunOptions optionsFor(Route route) {
  RunOptions options;
  options.deadline = std::chrono::seconds(90);
  if (route == Route::kGpuToGpu) return options;
  if (route == Route::kHostRelays) {
    options.env["SLIMECCL_P2P_DISABLE"] = "1";
    return options;
  }
  options.env["SLIMECCL_GPU_DIRECT"] = "0";
  options.env["SLIMECCL_STAGING_CHUNK_BYTES"] = "1M";
  if (route == Route::kWholeOpStaging) options.env["SLIMECCL_STAGING_CHUNKS"] = "off";
  return options;
}

void holdBack(cudaStream_t stream, int milliseconds) {
  CUDA_RANK_CHECK(cudaLaunchHostFunc(
      stream, [](void* ms) { std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<intptr_t>(ms))); },
      reinterpret_cast<void*>(static_cast<intptr_t>(milliseconds))));
}

// What the application does on the GPU while the ops are in flight.
void allocateAndSynchronize() {
  void* scratch = nullptr;
  CUDA_RANK_CHECK(cudaMalloc(&scratch, 64 << 20));
  cudaStream_t other = nullptr;
  CUDA_RANK_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CUDA_RANK_CHECK(cudaMemsetAsync(scratch, 1, 64 << 20, other));
  CUDA_RANK_CHECK(cudaStreamSynchronize(other));
  CUDA_RANK_CHECK(cudaStreamDestroy(other));
  CUDA_RANK_CHECK(cudaFree(scratch));
  CUDA_RANK_CHECK(cudaDeviceSynchronize());
}

int32_t sumOf(int nranks, size_t i, int round) {
  int32_t total = 0;
  for (int r = 0; r < nranks; ++r) total += valueOf(r, i, round);
  return total;
}

void checkRoute(Route route, const slimecclDevicePathInfo& before, const slimecclDevicePathInfo& after) {
  switch (route) {
    case Route::kStagedChunks:
      RANK_CHECK(after.stagedChunks > before.stagedChunks, "no op ran through the chunk arena");
      RANK_CHECK(after.opsGpuToGpu == before.opsGpuToGpu, "an op went GPU to GPU");
      break;
    case Route::kWholeOpStaging:
      RANK_CHECK(after.opsStaged > before.opsStaged, "no op crossed host staging");
      RANK_CHECK(after.stagedChunks == before.stagedChunks, "an op ran in chunks with SLIMECCL_STAGING_CHUNKS=off");
      RANK_CHECK(after.opsGpuToGpu == before.opsGpuToGpu, "an op went GPU to GPU");
      break;
    case Route::kGpuToGpu:
      RANK_CHECK(after.opsGpuToGpu > before.opsGpuToGpu, "no op went GPU to GPU");
      RANK_CHECK(after.opsStaged == before.opsStaged, "an op crossed host staging");
      break;
    case Route::kHostRelays:
      RANK_CHECK(after.hostRelays == 1 &&
                     after.opsRelayed - before.opsRelayed == after.opsGpuToGpu - before.opsGpuToGpu &&
                     after.opsRelayed > before.opsRelayed,
                 "ops relayed: ", after.opsRelayed - before.opsRelayed, " of ", after.opsGpuToGpu - before.opsGpuToGpu,
                 " GPU to GPU");
      RANK_CHECK(after.opsStaged == before.opsStaged, "an op crossed host staging");
      break;
  }
}

class FrameworkShapes : public ::testing::TestWithParam<RouteCase> {};

TEST_P(FrameworkShapes, OpsCompleteWhileTheApplicationUsesTheGpu) {
  const Route route = GetParam().route;
  if (route == Route::kGpuToGpu) {
    SKIP_WITHOUT_GPUS();
  } else {
    SKIP_WITHOUT_A_GPU();
  }
  runRanksRaw(
      Launch::kForkedShm, kRanks,
      [route](int rank, int nranks, const slimecclUniqueId& id) {
        CUDA_RANK_CHECK(cudaSetDevice(rank % usableGpus()));
        CUDA_RANK_CHECK(cudaFree(nullptr));
        withComm(rank, nranks, id, [&](slimecclComm_t comm) {
          slimecclComm_t second = nullptr;
          RANK_CHECK_SUCCESS(slimecclCommSplit(comm, 0, rank, &second, nullptr), comm);
          RankGpu first(rank), other(rank);
          cudaEvent_t firstDone = nullptr;
          CUDA_RANK_CHECK(cudaEventCreateWithFlags(&firstDone, cudaEventDisableTiming));
          Ints reduced(kLargeCount), gathered(kSmallCount * nranks), reducedSecond(kSmallCount);
          const slimecclDevicePathInfo before = pathOf(comm);
          for (int round = 0; round < kIterations; ++round) {
            reduced.write(valuesOf(rank, kLargeCount, 0, round));
            gathered.write(valuesOf(rank, kSmallCount, 0, round), rank * kSmallCount);
            reducedSecond.write(valuesOf(rank, kSmallCount, 0, round + 10));
            holdBack(first.cuda, 100);
            std::thread issuer([&] {
              RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
              RANK_CHECK_SUCCESS(slimecclAllReduce(reduced.data, reduced.data, kLargeCount, slimecclInt32, slimecclSum,
                                                   comm, first.stream),
                                 comm);
              RANK_CHECK_SUCCESS(slimecclAllGather(gathered.data + rank * kSmallCount, gathered.data, kSmallCount,
                                                   slimecclInt32, comm, first.stream),
                                 comm);
              RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
            });
            issuer.join();
            CUDA_RANK_CHECK(cudaEventRecord(firstDone, first.cuda));
            CUDA_RANK_CHECK(cudaStreamWaitEvent(other.cuda, firstDone, 0));
            RANK_CHECK_SUCCESS(slimecclAllReduce(reducedSecond.data, reducedSecond.data, kSmallCount, slimecclInt32,
                                                 slimecclSum, second, other.stream),
                               second);
            allocateAndSynchronize();
            first.sync();
            other.sync();
            const std::vector<int32_t> sums = reduced.read(), blocks = gathered.read(),
                                       secondSums = reducedSecond.read();
            for (size_t i = 0; i < kLargeCount; ++i)
              RANK_CHECK(sums[i] == sumOf(nranks, i, round), "round ", round, ": AllReduce element ", i);
            for (int r = 0; r < nranks; ++r)
              for (size_t i = 0; i < kSmallCount; ++i)
                RANK_CHECK(blocks[r * kSmallCount + i] == valueOf(r, i, round), "round ", round, ": AllGather block ",
                           r, " element ", i);
            for (size_t i = 0; i < kSmallCount; ++i)
              RANK_CHECK(secondSums[i] == sumOf(nranks, i, round + 10), "round ", round,
                         ": the second comm's AllReduce element ", i);
          }
          checkRoute(route, before, pathOf(comm));
          CUDA_RANK_CHECK(cudaEventDestroy(firstDone));
          RANK_CHECK_SUCCESS(slimecclCommFinalize(second), second);
          RANK_CHECK_SUCCESS(slimecclCommDestroy(second), nullptr);
        });
      },
      optionsFor(route));
}

// PyTorch captures collectives into CUDA graphs; an op through host memory cannot be captured (the
// worker moves its bytes when it runs, not the GPU). It is refused with a sentence naming the op,
// before anything is queued on the capturing stream, and the capture still ends.
TEST(FrameworkShapesCapture, AnOpThroughHostMemoryIsRefusedInACapture) {
  SKIP_WITHOUT_A_GPU();
  RunOptions options = optionsFor(Route::kStagedChunks);
  runRanksRaw(
      Launch::kForkedShm, 1,
      [](int rank, int nranks, const slimecclUniqueId& id) {
        CUDA_RANK_CHECK(cudaSetDevice(0));
        slimecclComm_t comm = nullptr;
        RANK_CHECK_SUCCESS(slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
        {
          RankGpu gpu(rank);
          Ints data(kSmallCount);
          CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
          const slimecclResult_t rc =
              slimecclAllReduce(data.data, data.data, kSmallCount, slimecclInt32, slimecclSum, comm, gpu.stream);
          const std::string why = slimecclGetLastError(comm);
          cudaGraph_t graph = nullptr;
          CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
          CUDA_RANK_CHECK(cudaGraphDestroy(graph));
          RANK_CHECK(rc == slimecclInvalidUsage, "the captured op returned ", rc, ": ", why);
          RANK_CHECK(why.find("rank 0: AllReduce") != std::string::npos &&
                         why.find("cannot be captured in a CUDA graph") != std::string::npos,
                     why);
        }
        RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
      },
      options);
}

// Both ranks of slimecclCommInitAll on one GPU, driven by one thread, on a comm without a chunk
// arena: neither rank's part of a group can be queued on its CUDA stream, so both run on the
// thread, together; run one after the other, the first would wait for the second for good.
int twoRanksFromOneThread() {
  constexpr int kPair = 2;
  constexpr size_t kCount = 1 << 16;
  const int devices[kPair] = {0, 0};
  slimecclComm_t comms[kPair];
  if (slimecclCommInitAll(comms, kPair, devices) != slimecclSuccess) return 2;
  cudaStream_t cuda[kPair];
  slimecclStream_t streams[kPair];
  int32_t* data[kPair];
  for (int r = 0; r < kPair; ++r) {
    if (cudaStreamCreateWithFlags(&cuda[r], cudaStreamNonBlocking) != cudaSuccess ||
        slimecclStreamCreateFromCuda(&streams[r], cuda[r]) != slimecclSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&data[r]), kCount * sizeof(int32_t)) != cudaSuccess)
      return 2;
    const std::vector<int32_t> values(kCount, r + 1);
    if (cudaMemcpy(data[r], values.data(), kCount * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess) return 2;
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  slimecclDevicePathInfo before{};
  slimecclCommGetDevicePathInfo(comms[0], &before);
  if (slimecclGroupStart() != slimecclSuccess) return 3;
  for (int r = 0; r < kPair; ++r)
    if (slimecclAllReduce(data[r], data[r], kCount, slimecclInt32, slimecclSum, comms[r], streams[r]) !=
        slimecclSuccess)
      return 3;
  if (slimecclGroupEnd() != slimecclSuccess) return 3;
  for (int r = 0; r < kPair; ++r) {
    std::vector<int32_t> got(kCount);
    if (cudaStreamSynchronize(cuda[r]) != cudaSuccess ||
        cudaMemcpy(got.data(), data[r], kCount * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess)
      return 3;
    for (int32_t v : got)
      if (v != 3) return 4;
  }
  slimecclDevicePathInfo after{};
  slimecclCommGetDevicePathInfo(comms[0], &after);
  if (after.opsStaged == before.opsStaged || after.stagedChunks != before.stagedChunks) return 5;
  for (int r = 0; r < kPair; ++r) {
    slimecclStreamDestroy(streams[r]);
    if (slimecclCommDestroy(comms[r]) != slimecclSuccess) return 6;
  }
  return 0;
}

// Exit codes: 2 setup failed; 3 an op failed; 4 wrong sums; 5 not through host staging whole;
// 6 destroy failed.
TEST(FrameworkShapesOneThread, PartsThatCannotBeQueuedRunTogether) {
  SKIP_WITHOUT_A_GPU();
  inChild({{"SLIMECCL_GPU_DIRECT", "0"}, {"SLIMECCL_STAGING_CHUNKS", "off"}}, twoRanksFromOneThread);
}

INSTANTIATE_TEST_SUITE_P(Routes, FrameworkShapes,
                         ::testing::Values(RouteCase{Route::kStagedChunks, "staged_chunks"},
                                           RouteCase{Route::kWholeOpStaging, "whole_op_staging"},
                                           RouteCase{Route::kGpuToGpu, "gpu_to_gpu"},
                                           RouteCase{Route::kHostRelays, "host_relays"}),
                         [](const ::testing::TestParamInfo<RouteCase>& info) { return info.param.name; });

}  // namespace
}  // namespace slimeccl_test
