// AllGather of device buffers across hosts in two tiers (src/exec/host_tiers.h): four forked ranks
// that use their GPUs before init, two per host (SLIMECCL_HOSTID), on the machine's GPUs round
// robin. Within each host the blocks go GPU to GPU, between hosts through pinned chunks over the
// net module, piece by piece. Each call is checked for its data and its route (the comm's tiers,
// the ops its tiers ran GPU to GPU and in chunks); a capture is refused with a sentence; a peer
// killed with SIGKILL and an abort release every survivor's stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gpu_ranks.h"
#include "harness.h"
#include "killed_peer.h"

namespace slimeccl_test {
namespace {

constexpr int kTierRanks = 4;

#define SKIP_WITHOUT_TWO_GPUS() \
  if (usableGpus() < 2) GTEST_SKIP() << "needs 2 GPUs, " << usableGpus() << " usable here"

// Pieces of 4 x 64 KiB: a block of 300000 int32 crosses between hosts in five.
RunOptions tierOptions() {
  RunOptions options;
  options.env["SLIMECCL_STAGING_CHUNK_BYTES"] = "64K";
  options.deadline = std::chrono::seconds(100);
  return options;
}

// Claims the rank's host and uses its GPU before init, so the comm takes host tiers.
void joinHost(int rank, const std::vector<int>& hostOf) {
  setenv("SLIMECCL_HOSTID", ("gpu-tier-host-" + std::to_string(hostOf[rank])).c_str(), 1);
  CUDA_RANK_CHECK(cudaSetDevice(rank % usableGpus()));
  CUDA_RANK_CHECK(cudaFree(nullptr));
}

slimecclRoute_t lastRoute(slimecclComm_t comm) {
  slimecclOpRoute route{};
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  return route.route;
}

struct TierLayout {
  const char* name;
  std::vector<int> hostOf;
};

class GpuHostTiers : public ::testing::TestWithParam<TierLayout> {};

TEST_P(GpuHostTiers, AllGatherOfDeviceBuffersGoesWithinHostsGpuToGpuAndBetweenHostsInChunks) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::vector<int> hostOf = GetParam().hostOf;
  runRanksRaw(
      Launch::kForkedSocket, kTierRanks,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        joinHost(rank, hostOf);
        withComm(rank, nranks, id, [&](slimecclComm_t comm) {
          RANK_CHECK(pathOf(comm).hostTiers == 1, "the comm has no host tiers");
          RankGpu gpu(rank);
          unsigned long long calls = 0;
          for (size_t count : {size_t{1}, size_t{4099}, size_t{300000}, size_t{1} << 22})
            for (bool inPlace : {false, true})
              for (bool cudaOrdered : {true, false}) {
                Ints send(count), recv(count * nranks);
                int32_t* mine = inPlace ? recv.data + rank * count : send.data;
                (inPlace ? recv : send).write(valuesOf(rank, count), inPlace ? rank * count : 0);
                const slimecclDevicePathInfo before = pathOf(comm);
                RANK_CHECK_SUCCESS(
                    slimecclAllGather(mine, recv.data, count, slimecclInt32, comm, cudaOrdered ? gpu.stream : nullptr),
                    comm);
                gpu.sync();
                const std::vector<int32_t> got = recv.read();
                for (int r = 0; r < nranks; ++r) {
                  const std::vector<int32_t> want = valuesOf(r, count);
                  for (size_t i = 0; i < count; ++i)
                    RANK_CHECK(got[r * count + i] == want[i], "count ", count, inPlace ? " in place" : "",
                               cudaOrdered ? " on a CUDA stream" : " on the NULL stream", ": rank ", r, " element ", i,
                               " is ", got[r * count + i], ", not ", want[i]);
                }
                const slimecclDevicePathInfo after = pathOf(comm);
                RANK_CHECK(lastRoute(comm) == slimecclRouteHostTiers && after.tieredAllGathers == ++calls, "count ",
                           count, " did not go in host tiers");
                RANK_CHECK(after.stagedChunks > before.stagedChunks, "count ", count,
                           ": no chunk crossed between hosts through pinned staging");
                if (cudaOrdered)
                  RANK_CHECK(after.opsGpuToGpu > before.opsGpuToGpu, "count ", count,
                             ": nothing went GPU to GPU within the host");
              }
          RANK_CHECK(pathOf(comm).gpuToGpu == 1 && pathOf(comm).stagingPinned == 1,
                     "the host tier has no GPU-to-GPU path or no pinned staging");
        });
      },
      tierOptions());
}

INSTANTIATE_TEST_SUITE_P(Layouts, GpuHostTiers,
                         ::testing::Values(TierLayout{"TwoHostsOfTwo", {0, 0, 1, 1}},
                                           TierLayout{"TwoHostsInterleaved", {0, 1, 0, 1}}),
                         [](const ::testing::TestParamInfo<TierLayout>& info) { return std::string(info.param.name); });

// Its transfers between hosts run on host staging, which a graph cannot hold: the call says so,
// queues nothing, and the comm goes on.
TEST(GpuHostTiersCapture, ACapturedAllGatherIsRefusedWithASentence) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::vector<int> hostOf{0, 0, 1, 1};
  runRanksRaw(
      Launch::kForkedSocket, kTierRanks,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        joinHost(rank, hostOf);
        withComm(rank, nranks, id, [&](slimecclComm_t comm) {
          RankGpu gpu(rank);
          Ints send(64), recv(64 * nranks);
          CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
          const slimecclResult_t rc = slimecclAllGather(send.data, recv.data, 64, slimecclInt32, comm, gpu.stream);
          cudaGraph_t graph = nullptr;
          CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
          if (graph != nullptr) cudaGraphDestroy(graph);
          RANK_CHECK(rc == slimecclInvalidUsage, "a captured AllGather in tiers returned ", rc);
          const std::string why = slimecclGetLastError(comm);
          RANK_CHECK(
              why.find("cannot be captured") != std::string::npos && why.find("rank " + std::to_string(rank)) == 0,
              "the refusal says: ", why);
          recv.write(std::vector<int32_t>(64 * nranks, 0));
          send.write(valuesOf(rank, 64));
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, 64, slimecclInt32, comm, gpu.stream), comm);
          gpu.sync();
          const std::vector<int32_t> got = recv.read();
          for (int r = 0; r < nranks; ++r)
            RANK_CHECK(std::vector<int32_t>(got.begin() + r * 64, got.begin() + (r + 1) * 64) == valuesOf(r, 64),
                       "rank ", r, "'s block is wrong after the refusal");
        });
      },
      tierOptions());
}

// Rank 3's stream reaches the op 3 s late; rank 0, on the other host, waits for it through the
// tiers and aborts: its stream is let go within a second, and its GPU stays usable.
TEST(GpuHostTiersFaults, AbortReleasesAStreamWaitingForAnotherHost) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::vector<int> hostOf{0, 0, 1, 1};
  RunOptions options = tierOptions();
  options.teardown = Teardown::kNone;
  runRanksRaw(
      Launch::kForkedSocket, kTierRanks,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        joinHost(rank, hostOf);
        slimecclComm_t comm;
        RANK_CHECK_SUCCESS(slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
        RankGpu gpu(rank);
        constexpr size_t kCount = size_t{1} << 20;
        Ints send(kCount), recv(kCount * nranks);
        if (rank == nranks - 1) reachTheNextOpLate(gpu);
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, kCount, slimecclInt32, comm, gpu.stream), comm);
        endAbortTest(comm, gpu, rank, "rank 3, on the other host");
      },
      options);
}

// The last rank, killed with SIGKILL while AllGathers of 64 MiB per rank run in tiers: every
// survivor's stream drains within 15 s with slimecclRemoteError, the sentence naming the tier and
// its peer that died (or the survivor that found it dead first), and its GPU stays usable.
TEST(GpuHostTiersFaults, PeerKilledDuringTieredAllGathers) {
  SKIP_WITHOUT_TWO_GPUS();
  runWithKilledPeer(
      [](int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t cuda) {
        constexpr size_t kCount = size_t{1} << 24;
        int32_t *send, *recv;
        cudaMalloc(reinterpret_cast<void**>(&send), kCount * sizeof(int32_t));
        cudaMalloc(reinterpret_cast<void**>(&recv), kCount * kTierRanks * sizeof(int32_t));
        // One AllGather to the end first: the links are up when the victim dies.
        if (slimecclAllGather(send, recv, kCount, slimecclInt32, comm, stream) != slimecclSuccess) _exit(4);
        if (cudaStreamSynchronize(cuda) != cudaSuccess) _exit(4);
        for (int i = 0; i < (rank == kTierRanks - 1 ? 1 : 10); ++i)
          if (slimecclAllGather(send, recv, kCount, slimecclInt32, comm, stream) != slimecclSuccess) {
            if (rank == kTierRanks - 1) _exit(4);
            break;
          }
      },
      KilledPeerRun{KilledPeerRoute::kHostTiers, kTierRanks, 2});
}

}  // namespace
}  // namespace slimeccl_test
