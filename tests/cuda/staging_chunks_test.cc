// Device buffers through host staging in chunks (src/exec/chunked_run.h): with the GPU-to-GPU path
// off (SLIMECCL_GPU_DIRECT=0, as for GPUs that cannot reach each other), ranks that use their GPU
// before init stage every op in 1 MiB chunks in memory pinned for it, copied by the copy engines.
// Every collective in and out of place, and a Send/Recv ring between device and host buffers, on
// the NULL stream and on a CUDA-ordered stream, on forked ranks over shm and sockets and on
// threads; the route is checked by the comm's counters (pinned staging, chunks run), not only the
// data.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_ranks.h"
#include "harness.h"
#include "killed_peer.h"

namespace slimeccl_test {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
// One chunk; 1.25 chunks per rank's block; and 4.5 chunks of a whole buffer on 2 ranks.
constexpr size_t kCounts[] = {4099, 327683, 589829};

RunOptions stagedInChunks() {
  RunOptions options;
  options.env["SLIMECCL_GPU_DIRECT"] = "0";
  options.env["SLIMECCL_STAGING_CHUNK_BYTES"] = "1M";
  return options;
}

// The chunks an op on device buffers runs as (per-rank blocks share a chunk's bytes; an op of at
// most a chunk runs as one).
unsigned long long chunksFor(size_t count, int blocks) {
  const size_t perChunk = kChunkBytes / (sizeof(int32_t) * blocks);
  return (count + perChunk - 1) / perChunk;
}

class Checker {
 public:
  Checker(int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t cuda)
      : rank_(rank), n_(nranks), comm_(comm), stream_(stream), cuda_(cuda) {}

  // Runs call() and checks that it ran as `chunks` chunks.
  template <typename Call>
  void expectChunks(unsigned long long chunks, const std::string& what, Call call) {
    const unsigned long long before = pathOf(comm_).stagedChunks;
    call();
    if (cuda_ != nullptr) CUDA_RANK_CHECK(cudaStreamSynchronize(cuda_));
    const unsigned long long ran = pathOf(comm_).stagedChunks - before;
    RANK_CHECK(ran == chunks, what, " ran as ", ran, " chunks, not ", chunks);
  }

  void allGather(size_t count, bool inPlace) {
    Ints send(count), recv(count * n_);
    int32_t* mine = inPlace ? recv.data + rank_ * count : send.data;
    (inPlace ? recv : send).write(valuesOf(rank_, count), inPlace ? rank_ * count : 0);
    expectChunks(chunksFor(count, n_), "AllGather", [&] {
      RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data, count, slimecclInt32, comm_, stream_), comm_);
    });
    const std::vector<int32_t> got = recv.read();
    for (int r = 0; r < n_; ++r)
      for (size_t i = 0; i < count; ++i)
        RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather in place ", inPlace, " block ", r, " element ", i);
  }

  void allReduce(size_t count, bool inPlace) {
    Ints send(count), recv(count);
    Ints& input = inPlace ? recv : send;
    input.write(valuesOf(rank_, count));
    expectChunks(chunksFor(count, 1), "AllReduce", [&] {
      RANK_CHECK_SUCCESS(slimecclAllReduce(input.data, recv.data, count, slimecclInt32, slimecclSum, comm_, stream_),
                         comm_);
    });
    const std::vector<int32_t> got = recv.read();
    for (size_t i = 0; i < count; ++i) RANK_CHECK(got[i] == sum(i), "AllReduce in place ", inPlace, " element ", i);
  }

  void reduceScatter(size_t count, bool inPlace) {
    Ints send(count * n_), recv(count);
    send.write(valuesOf(rank_, count * n_));
    int32_t* out = inPlace ? send.data + rank_ * count : recv.data;
    expectChunks(chunksFor(count, n_), "ReduceScatter", [&] {
      RANK_CHECK_SUCCESS(slimecclReduceScatter(send.data, out, count, slimecclInt32, slimecclSum, comm_, stream_),
                         comm_);
    });
    const std::vector<int32_t> got = inPlace ? send.read() : recv.read();
    const size_t first = inPlace ? rank_ * count : 0;
    for (size_t i = 0; i < count; ++i)
      RANK_CHECK(got[first + i] == sum(rank_ * count + i), "ReduceScatter in place ", inPlace, " element ", i);
  }

  void broadcastAndReduce(size_t count, bool inPlace) {
    const int root = n_ - 1;
    Ints send(count), recv(count);
    Ints& input = inPlace ? recv : send;
    if (rank_ == root) input.write(valuesOf(root, count, 0, 3));
    expectChunks(chunksFor(count, 1), "Broadcast", [&] {
      RANK_CHECK_SUCCESS(slimecclBroadcast(input.data, recv.data, count, slimecclInt32, root, comm_, stream_), comm_);
    });
    std::vector<int32_t> got = recv.read();
    for (size_t i = 0; i < count; ++i) RANK_CHECK(got[i] == valueOf(root, i, 3), "Broadcast element ", i);
    input.write(valuesOf(rank_, count));
    expectChunks(chunksFor(count, 1), "Reduce", [&] {
      RANK_CHECK_SUCCESS(slimecclReduce(input.data, recv.data, count, slimecclInt32, slimecclSum, 0, comm_, stream_),
                         comm_);
    });
    if (rank_ != 0) return;
    got = recv.read();
    for (size_t i = 0; i < count; ++i) RANK_CHECK(got[i] == sum(i), "Reduce in place ", inPlace, " element ", i);
  }

  void alltoAll(size_t count) {
    Ints send(count * n_), recv(count * n_);
    send.write(valuesOf(rank_, count * n_));
    expectChunks(chunksFor(count, n_), "AlltoAll", [&] {
      RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data, recv.data, count, slimecclInt32, comm_, stream_), comm_);
    });
    const std::vector<int32_t> got = recv.read();
    for (int from = 0; from < n_; ++from)
      for (size_t i = 0; i < count; ++i)
        RANK_CHECK(got[from * count + i] == valueOf(from, rank_ * count + i), "AlltoAll from ", from, " element ", i);
  }

  // From device memory to the next rank's host memory, and from host memory to device memory.
  void sendRecvRing(size_t count) {
    const int next = (rank_ + 1) % n_, prev = (rank_ + n_ - 1) % n_;
    Ints out(count), in(count);
    out.write(valuesOf(rank_, count, 0, 5));
    std::vector<int32_t> hostIn(count, -1), hostOut = valuesOf(rank_, count, 0, 6);
    for (int round = 0; round < 2; ++round) {
      // The device side runs through the arena; the host side too where it is cut into chunks.
      const unsigned long long hostChunks = count * sizeof(int32_t) > kChunkBytes ? chunksFor(count, 1) : 0;
      expectChunks(chunksFor(count, 1) + hostChunks, "Send/Recv", [&] {
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        RANK_CHECK_SUCCESS(slimecclSend(round == 0 ? static_cast<void*>(out.data) : hostOut.data(), count,
                                        slimecclInt32, next, comm_, stream_),
                           comm_);
        RANK_CHECK_SUCCESS(slimecclRecv(round == 0 ? hostIn.data() : static_cast<void*>(in.data), count, slimecclInt32,
                                        prev, comm_, stream_),
                           comm_);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
      });
      const std::vector<int32_t> got = round == 0 ? hostIn : in.read();
      for (size_t i = 0; i < count; ++i)
        RANK_CHECK(got[i] == valueOf(prev, i, round == 0 ? 5 : 6), "Send/Recv round ", round, " element ", i);
    }
  }

 private:
  int32_t sum(size_t i) const {
    int32_t total = 0;
    for (int r = 0; r < n_; ++r) total += valueOf(r, i);
    return total;
  }

  int rank_, n_;
  slimecclComm_t comm_;
  slimecclStream_t stream_;
  cudaStream_t cuda_;
};

struct ChunkCase {
  Launch launch;
  bool cudaOrdered;
};

class GpuStagingChunks : public ::testing::TestWithParam<ChunkCase> {};

TEST_P(GpuStagingChunks, EveryOpRunsRightInPinnedChunks) {
  const ChunkCase param = GetParam();
  // Forked ranks may share a GPU; threads sharing one would share its hardware queues, where one
  // rank's stream waiting for the host holds up the other's copies (docs/cuda.md).
  if (param.launch == Launch::kThreads) {
    SKIP_WITHOUT_GPUS();
  } else {
    SKIP_WITHOUT_A_GPU();
  }
  runRanksRaw(
      param.launch, kRanks,
      [param](int rank, int nranks, const slimecclUniqueId& id) {
        // The rank uses its GPU before init, so its comm stages chunks in memory pinned for it.
        CUDA_RANK_CHECK(cudaSetDevice(rank % usableGpus()));
        CUDA_RANK_CHECK(cudaFree(nullptr));
        withComm(rank, nranks, id, [&](slimecclComm_t comm) {
          RANK_CHECK(pathOf(comm).stagingPinned == 1, "the comm's staging is not pinned for its GPU");
          RANK_CHECK(pathOf(comm).gpuToGpu == 0, "the GPU-to-GPU path was set up with SLIMECCL_GPU_DIRECT=0");
          std::unique_ptr<RankGpu> gpu;
          if (param.cudaOrdered) gpu = std::make_unique<RankGpu>(rank);
          Checker check(rank, nranks, comm, gpu ? gpu->stream : nullptr, gpu ? gpu->cuda : nullptr);
          for (size_t count : kCounts) {
            for (bool inPlace : {false, true}) {
              check.allGather(count, inPlace);
              check.allReduce(count, inPlace);
              check.reduceScatter(count, inPlace);
              check.broadcastAndReduce(count, inPlace);
            }
            check.alltoAll(count);
            check.sendRecvRing(count);
          }
          RANK_CHECK(pathOf(comm).opsGpuToGpu == 0, "an op went GPU to GPU");
        });
      },
      stagedInChunks());
}

INSTANTIATE_TEST_SUITE_P(Launches, GpuStagingChunks,
                         ::testing::Values(ChunkCase{Launch::kForkedShm, false}, ChunkCase{Launch::kForkedShm, true},
                                           ChunkCase{Launch::kForkedSocket, false},
                                           ChunkCase{Launch::kForkedSocket, true}, ChunkCase{Launch::kThreads, true}),
                         [](const ::testing::TestParamInfo<ChunkCase>& info) {
                           return std::string(launchName(info.param.launch)) +
                                  (info.param.cudaOrdered ? "_cuda_stream" : "_null_stream");
                         });

// The last rank, killed with SIGKILL while AllGathers of 256 MiB per rank run in chunks on the
// survivors' CUDA streams: each survivor's op ends with an error naming it (or the survivor that
// found it dead first), its stream drains within 15 s, and its GPU stays usable.
TEST(GpuStagingChunksFaults, PeerKilledDuringChunkedAllGathers) {
  SKIP_WITHOUT_A_GPU();
  setenv("SLIMECCL_GPU_DIRECT", "0", 1);
  runWithKilledPeer(
      [](int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t cuda) {
        constexpr size_t kCount = size_t{1} << 26;
        int32_t *send, *recv;
        cudaMalloc(reinterpret_cast<void**>(&send), kCount * sizeof(int32_t));
        cudaMalloc(reinterpret_cast<void**>(&recv), kCount * kRanks * sizeof(int32_t));
        // One AllGather to the end first: the links are up when the victim dies.
        if (slimecclAllGather(send, recv, kCount, slimecclInt32, comm, stream) != slimecclSuccess) _exit(4);
        if (cudaStreamSynchronize(cuda) != cudaSuccess) _exit(4);
        for (int i = 0; i < (rank == kRanks - 1 ? 1 : 10); ++i)
          if (slimecclAllGather(send, recv, kCount, slimecclInt32, comm, stream) != slimecclSuccess) {
            if (rank == kRanks - 1) _exit(4);
            break;
          }
      },
      KilledPeerRun{KilledPeerRoute::kStagedChunks});
}

}  // namespace
}  // namespace slimeccl_test
