// The GPU-to-GPU path (docs/cuda.md): ops on device buffers and a CUDA-ordered stream, on ranks
// that are processes (CUDA IPC) or threads of one process (peer access), each rank on its own GPU.
// Each test checks the data and, through slimecclCommGetDevicePathInfo, that the ops went GPU to
// GPU. Every test runs SLIMECCL_TEST_GPUS ranks (default 2), so the suite runs again on machines with
// 4 and 8 GPUs. Skipped where fewer GPUs than ranks can be used. Small ops take no flagged lines
// here (linesOff): line_ops_test.cc tests those.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "device_values.h"
#include "gpu_ranks.h"
#include "harness.h"
#include "killed_peer.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// What the copy kernel's boundary depends on: the op, and for Broadcast the rank count.
enum class CopyOp { kAllGather, kAlltoAll, kBroadcast, kMessage };

// The largest op of each kind that goes by one kernel when SLIMECCL_GPU_SM_COPY_BYTES is not set:
// the tuner's measured boundaries (algorithms/gpu_tuning.h, docs/performance.md), held here.
size_t kernelLimit(CopyOp op) {
  constexpr size_t kMiB = size_t{1} << 20;
  switch (op) {
    case CopyOp::kAllGather:
    case CopyOp::kAlltoAll: return 64 * kMiB;
    // On 3 or more ranks a Broadcast takes scatter_pull, a reduction kernel, not the copy kernel.
    case CopyOp::kBroadcast: return kRanks <= 2 ? 32 * kMiB : 0;
    case CopyOp::kMessage: return 16 * kMiB;
  }
  return 0;
}

// Every op since `before` went GPU to GPU; `bySms` of them by one kernel, the others by copy engine.
void checkGpuToGpu(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long ops,
                   unsigned long long bySms) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.gpuToGpu == 1, "the comm has no GPU-to-GPU path");
  RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == ops, "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu,
             " of ", ops);
  RANK_CHECK(now.opsBySms - before.opsBySms == bySms, "ops by one kernel: ", now.opsBySms - before.opsBySms, " of ",
             bySms);
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
}

// How many of `ops` ops of `bytes` each (an AllGather's output, an AlltoAll's send buffer, a
// Broadcast's buffer, a message) go by one kernel.
unsigned long long bySms(CopyOp op, size_t bytes, unsigned long long ops) { return bytes <= kernelLimit(op) ? ops : 0; }

// The bytes of an AllGather of `count` ints per rank (and of an AlltoAll sending `count` to each).
size_t gatheredBytes(size_t count) { return count * sizeof(int32_t) * kRanks; }

// Round `round` of an AllGather of send.count elements: written, gathered, checked.
void allgatherRound(int rank, slimecclComm_t comm, RankGpu& gpu, Ints& send, Ints& recv, int round) {
  const size_t count = send.count;
  send.write(valuesOf(rank, count, 0, round));
  RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
  gpu.sync();
  const std::vector<int32_t> got = recv.read();
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < count; ++i)
      RANK_CHECK(got[r * count + i] == valueOf(r, i, round), "round ", round, " block ", r, " element ", i);
}

// Small counts, and counts at and just past the copy kernel's boundaries: an AllGather's and an
// AlltoAll's (the same bytes), a message's, a Broadcast's (where it has one).
std::vector<size_t> opCounts() {
  std::vector<size_t> counts = {1, 4099};
  for (size_t bytes :
       {kernelLimit(CopyOp::kAllGather) / kRanks, kernelLimit(CopyOp::kMessage), kernelLimit(CopyOp::kBroadcast)}) {
    if (bytes == 0) continue;
    counts.push_back(bytes / sizeof(int32_t));
    counts.push_back(bytes / sizeof(int32_t) + 1);
  }
  return counts;
}

// Runs with the copy kernel off (SLIMECCL_GPU_SM_COPY_BYTES=0): every op by copy engine.
RunOptions copyKernelOff() {
  RunOptions options;
  options.env["SLIMECCL_GPU_SM_COPY_BYTES"] = "0";
  return options;
}

class GpuDirect : public ::testing::TestWithParam<Launch> {};

TEST_P(GpuDirect, AllGatherBroadcastAlltoAllInAndOutOfPlace) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        for (size_t count : opCounts()) {
          for (bool inPlace : {false, true}) {
            const slimecclDevicePathInfo before = pathOf(comm);
            Ints send(count), recv(count * kRanks), bsend(count), brecv(count), asend(count * kRanks),
                arecv(count * kRanks);
            int32_t* mine = inPlace ? recv.data + rank * count : send.data;
            if (inPlace)
              recv.write(valuesOf(rank, count), rank * count);
            else
              send.write(valuesOf(rank, count));
            RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
            const int root = static_cast<int>(count % kRanks);
            Ints& bsource = inPlace ? brecv : bsend;
            if (rank == root) bsource.write(valuesOf(root, count, 0, 3));
            RANK_CHECK_SUCCESS(
                slimecclBroadcast(bsource.data, brecv.data, count, slimecclInt32, root, comm, gpu.stream), comm);
            // In place, peers' blocks land over blocks this rank has yet to send: it sends a snapshot.
            Ints& adest = inPlace ? asend : arecv;
            asend.write(valuesOf(rank, count * kRanks));
            RANK_CHECK_SUCCESS(slimecclAlltoAll(asend.data, adest.data, count, slimecclInt32, comm, gpu.stream), comm);
            gpu.sync();
            checkGpuToGpu(comm, before, 3,
                          bySms(CopyOp::kAllGather, gatheredBytes(count), 1) +
                              bySms(CopyOp::kAlltoAll, gatheredBytes(count), 1) +
                              bySms(CopyOp::kBroadcast, count * sizeof(int32_t), 1));
            const std::vector<int32_t> got = recv.read(), bgot = brecv.read(), agot = adest.read();
            for (int r = 0; r < kRanks; ++r)
              for (size_t i = 0; i < count; ++i) {
                RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather count ", count, " in place ", inPlace,
                           " block ", r, " element ", i);
                RANK_CHECK(agot[r * count + i] == valueOf(r, rank * count + i), "AlltoAll count ", count, " in place ",
                           inPlace, " from ", r, " element ", i);
              }
            for (size_t i = 0; i < count; ++i)
              RANK_CHECK(bgot[i] == valueOf(root, i, 3), "Broadcast count ", count, " in place ", inPlace, " element ",
                         i);
          }
        }
      },
      linesOff());
}

// PyTorch's default stream is the legacy default stream, on which CUDA takes no batch of copies:
// ops there go GPU to GPU too, by one kernel and by copy engines.
TEST_P(GpuDirect, OpsOnTheLegacyDefaultStream) {
  SKIP_WITHOUT_GPUS();
  for (bool kernel : {true, false}) {
    runRanks(
        GetParam(), kRanks,
        [](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank, true);
          for (size_t count : {size_t{1}, size_t{4099}, size_t{1} << 20}) {
            const slimecclDevicePathInfo before = pathOf(comm);
            Ints send(count), recv(count * kRanks), asend(count * kRanks), arecv(count * kRanks);
            send.write(valuesOf(rank, count));
            asend.write(valuesOf(rank, count * kRanks));
            RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
            RANK_CHECK_SUCCESS(slimecclAlltoAll(asend.data, arecv.data, count, slimecclInt32, comm, gpu.stream), comm);
            gpu.sync();
            const slimecclDevicePathInfo now = pathOf(comm);
            RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == 2,
                       "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu, " of 2");
            const std::vector<int32_t> got = recv.read(), agot = arecv.read();
            for (int r = 0; r < kRanks; ++r)
              for (size_t i = 0; i < count; ++i) {
                RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather count ", count, " block ", r, " element ",
                           i);
                RANK_CHECK(agot[r * count + i] == valueOf(r, rank * count + i), "AlltoAll count ", count, " from ", r,
                           " element ", i);
              }
          }
        },
        linesOff(kernel ? RunOptions{} : copyKernelOff()));
  }
}

// An AlltoAll from host memory into device memory takes host staging; a GPU-to-GPU op after it on the
// same stream sees its output.
TEST_P(GpuDirect, AGpuOpAfterAStagedOneOnTheSameStreamSeesItsOutput) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 4099;
        Ints exchanged(count * kRanks), gathered(count * kRanks);
        const std::vector<int32_t> hostSend = valuesOf(rank, count * kRanks);
        const slimecclDevicePathInfo before = pathOf(comm);
        RANK_CHECK_SUCCESS(slimecclAlltoAll(hostSend.data(), exchanged.data, count, slimecclInt32, comm, gpu.stream),
                           comm);
        // Block 0 now holds rank 0's block for this rank; everyone gathers theirs.
        RANK_CHECK_SUCCESS(slimecclAllGather(exchanged.data, gathered.data, count, slimecclInt32, comm, gpu.stream),
                           comm);
        gpu.sync();
        const slimecclDevicePathInfo after = pathOf(comm);
        RANK_CHECK(after.opsStaged - before.opsStaged == 1 && after.opsGpuToGpu - before.opsGpuToGpu == 1, "staged ",
                   after.opsStaged - before.opsStaged, ", GPU to GPU ", after.opsGpuToGpu - before.opsGpuToGpu);
        const std::vector<int32_t> got = gathered.read();
        for (int r = 0; r < kRanks; ++r)
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[r * count + i] == valueOf(0, r * count + i), "AlltoAll then AllGather block ", r,
                       " element ", i);
      },
      linesOff());
}

TEST_P(GpuDirect, SendRecvInGroupsAndToItself) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        for (size_t count : opCounts()) {
          const slimecclDevicePathInfo before = pathOf(comm);
          Ints send(count), recv(count), self(count), second(count), third(count);
          send.write(valuesOf(rank, count));
          // Three messages to the same peer in one group, and a message to itself.
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(send.data, count, slimecclInt32, next, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(recv.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclSend(send.data, count, slimecclInt32, rank, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(self.data, count, slimecclInt32, rank, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclSend(send.data, count, slimecclInt32, next, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(second.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
          // A third to the same peer: more than the board's two slots per row hold at once.
          RANK_CHECK_SUCCESS(slimecclSend(send.data, count, slimecclInt32, next, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(third.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          gpu.sync();
          checkGpuToGpu(comm, before, 8, bySms(CopyOp::kMessage, count * sizeof(int32_t), 8));
          const std::vector<int32_t> got = recv.read(), mine = self.read(), two = second.read(), three = third.read();
          for (size_t i = 0; i < count; ++i) {
            RANK_CHECK(got[i] == valueOf(prev, i), "Recv count ", count, " element ", i);
            RANK_CHECK(two[i] == valueOf(prev, i), "second Recv count ", count, " element ", i);
            RANK_CHECK(three[i] == valueOf(prev, i), "third Recv count ", count, " element ", i);
            RANK_CHECK(mine[i] == valueOf(rank, i), "Recv from itself count ", count, " element ", i);
          }
        }
        // In place (one buffer sent and received into), by the kernel and past its bound by copy
        // engines: GPU to GPU, each Send from a snapshot taken before the peer may write.
        for (size_t count : {size_t{4099}, kernelLimit(CopyOp::kMessage) / sizeof(int32_t) + 1}) {
          Ints both(count);
          both.write(valuesOf(rank, count));
          const slimecclDevicePathInfo before = pathOf(comm);
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(both.data, count, slimecclInt32, next, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(both.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          gpu.sync();
          checkGpuToGpu(comm, before, 2, bySms(CopyOp::kMessage, count * sizeof(int32_t), 2));
          const std::vector<int32_t> got = both.read();
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[i] == valueOf(prev, i), "in-place Recv count ", count, " element ", i);
        }
        // Blocking calls outside a group between pairs of ranks, in the order that cannot deadlock.
        const int partner = rank ^ 1;
        if (partner >= kRanks) return;
        Ints a(4099), b(4099);
        a.write(valuesOf(rank, 4099));
        const slimecclDevicePathInfo before = pathOf(comm);
        if (rank < partner) {
          RANK_CHECK_SUCCESS(slimecclSend(a.data, 4099, slimecclInt32, partner, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(b.data, 4099, slimecclInt32, partner, comm, gpu.stream), comm);
        } else {
          RANK_CHECK_SUCCESS(slimecclRecv(b.data, 4099, slimecclInt32, partner, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclSend(a.data, 4099, slimecclInt32, partner, comm, gpu.stream), comm);
        }
        gpu.sync();
        checkGpuToGpu(comm, before, 2, 2);
        const std::vector<int32_t> got = b.read();
        for (size_t i = 0; i < 4099; ++i) RANK_CHECK(got[i] == valueOf(partner, i), "ping-pong element ", i);
      },
      linesOff());
}

TEST_P(GpuDirect, OpsOfOneCommOnTwoStreamsKeepTheirCallOrder) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu first(rank), second(rank);
        const size_t count = 1 << 21;  // by copy engine
        constexpr int kRounds = 12;
        Ints send(count * kRounds), recv(count * kRanks * kRounds);
        send.write(valuesOf(rank, count * kRounds));
        // No event between the streams: the library orders a comm's ops in the order of the calls.
        for (int round = 0; round < kRounds; ++round) {
          RankGpu& on = round % 2 == 0 ? first : second;
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data + round * count, recv.data + round * count * kRanks, count,
                                               slimecclInt32, comm, on.stream),
                             comm);
        }
        first.sync();
        second.sync();
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, kRounds,
                      bySms(CopyOp::kAllGather, gatheredBytes(count), kRounds));
        const std::vector<int32_t> got = recv.read();
        for (int round = 0; round < kRounds; ++round)
          for (int r = 0; r < kRanks; ++r)
            for (size_t i = 0; i < count; ++i)
              RANK_CHECK(got[(round * kRanks + r) * count + i] == valueOf(r, round * count + i), "round ", round,
                         " block ", r, " element ", i);
      },
      linesOff());
}

TEST_P(GpuDirect, RegisteredBuffersGoGpuToGpu) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 1 << 21;  // by copy engine
        Ints send(count), recv(count * kRanks);
        void *sendHandle = nullptr, *recvHandle = nullptr, *tooLong = nullptr;
        RANK_CHECK_SUCCESS(slimecclCommRegister(comm, send.data, count * sizeof(int32_t), &sendHandle), comm);
        RANK_CHECK_SUCCESS(slimecclCommRegister(comm, recv.data, count * kRanks * sizeof(int32_t), &recvHandle), comm);
        // A device range must lie within its allocation.
        RANK_CHECK_RESULT(slimecclInvalidArgument,
                          slimecclCommRegister(comm, recv.data + 1, count * kRanks * sizeof(int32_t), &tooLong), comm);
        for (int round = 0; round < 3; ++round) {
          allgatherRound(rank, comm, gpu, send, recv, round);
        }
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, 3, bySms(CopyOp::kAllGather, gatheredBytes(count), 3));
        RANK_CHECK_SUCCESS(slimecclCommDeregister(comm, sendHandle), comm);
        RANK_CHECK_SUCCESS(slimecclCommDeregister(comm, recvHandle), comm);
      },
      linesOff());
}

TEST_P(GpuDirect, FreedAndReallocatedBufferIsMappedAfresh) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 1 << 21;  // by copy engine
        for (int round = 0; round < 4; ++round) {
          // Freed after each round: the next allocation tends to come back at the same address.
          Ints send(count), recv(count * kRanks);
          allgatherRound(rank, comm, gpu, send, recv, round);
          // Every rank has read its peers' copies before any frees its buffers.
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, 1, slimecclInt32, comm, gpu.stream), comm);
          gpu.sync();
        }
        // Each round: an AllGather of count elements, then one of a single element (by one kernel).
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, 8, bySms(CopyOp::kAllGather, gatheredBytes(count), 4) + 4);
      },
      linesOff());
}

TEST_P(GpuDirect, CapturedGraphReplaysAThousandTimes) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 4099;
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        Ints send(count), recv(count * kRanks), sr(count), both(count), all(count * kRanks);
        // The graph: AllGather, then each rank sends its own gathered block to the next; then an
        // in-place sendrecv and an in-place AlltoAll, whose snapshots the graph allocates and frees.
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        RANK_CHECK_SUCCESS(slimecclSend(recv.data + rank * count, count, slimecclInt32, next, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(sr.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        RANK_CHECK_SUCCESS(slimecclSend(both.data, count, slimecclInt32, next, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(both.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        RANK_CHECK_SUCCESS(slimecclAlltoAll(all.data, all.data, count, slimecclInt32, comm, gpu.stream), comm);
        CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
        CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        // Captured as the small-op kernel: its flags and counters must come back to rest at every replay.
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, 6, 6);
        std::vector<int32_t> input, blocks;
        for (int replay = 0; replay < 1000; ++replay) {
          input = valuesOf(rank, count, 0, replay);
          blocks = valuesOf(rank, count * kRanks, 0, replay);
          CUDA_RANK_CHECK(
              cudaMemcpyAsync(send.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(
              cudaMemcpyAsync(both.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaMemcpyAsync(all.data, blocks.data(), blocks.size() * sizeof(int32_t),
                                          cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
          if (replay % 97 != 0 && replay != 999) continue;
          gpu.sync();
          const std::vector<int32_t> got = recv.read(), ring = sr.read(), swapped = both.read(), mixed = all.read();
          for (int r = 0; r < kRanks; ++r)
            for (size_t i = 0; i < count; ++i) {
              RANK_CHECK(got[r * count + i] == valueOf(r, i, replay), "replay ", replay, " block ", r, " element ", i);
              RANK_CHECK(mixed[r * count + i] == valueOf(r, rank * count + i, replay), "replay ", replay,
                         " in-place AlltoAll block ", r, " element ", i);
            }
          for (size_t i = 0; i < count; ++i) {
            RANK_CHECK(ring[i] == valueOf(prev, i, replay), "replay ", replay, " ring element ", i);
            RANK_CHECK(swapped[i] == valueOf(prev, i, replay), "replay ", replay, " in-place Recv element ", i);
          }
        }
        gpu.sync();
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      },
      linesOff());
}

// Rank 0 aborts while its stream waits in an AllGather (or an AllReduce) of `count` ints for rank 1;
// the other ranks' streams are released too.
void abortReleasesAWaitingStream(Launch launch, size_t count, bool reduce = false) {
  RunOptions options;
  options.teardown = Teardown::kNone;
  runRanks(
      launch, kRanks,
      [count, reduce](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        Ints send(count), recv(kRanks * count);
        if (rank == 1) reachTheNextOpLate(gpu);
        if (reduce)
          RANK_CHECK_SUCCESS(
              slimecclAllReduce(send.data, recv.data, count, slimecclInt32, slimecclSum, comm, gpu.stream), comm);
        else
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
        // Queued GPU to GPU: the stream, not a host thread, waits for the peer.
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, 1,
                      reduce ? 0 : bySms(CopyOp::kAllGather, gatheredBytes(count), 1));
        endAbortTest(comm, gpu, rank, "rank 1");
      },
      linesOff(options));
}

TEST_P(GpuDirect, AbortReleasesAStreamWaitingOnCopyEnginesWithinASecond) {
  SKIP_WITHOUT_GPUS();
  abortReleasesAWaitingStream(GetParam(), 1 << 21);
}

TEST_P(GpuDirect, AbortReleasesAStreamWaitingInTheSmallOpKernelWithinASecond) {
  SKIP_WITHOUT_GPUS();
  abortReleasesAWaitingStream(GetParam(), 1024);
}

TEST_P(GpuDirect, AbortReleasesAStreamWaitingInAReductionKernelWithinASecond) {
  SKIP_WITHOUT_GPUS();
  abortReleasesAWaitingStream(GetParam(), 1 << 20, true);
}

// With SLIMECCL_GPU_SM_COPY_BYTES=0 small ops go by copy engine too, with the same data.
TEST_P(GpuDirect, SmallOpsTakeCopyEnginesWhenTheKernelIsOff) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 4099;
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        Ints send(count), recv(count * kRanks), got(count);
        for (int round = 0; round < 3; ++round) {
          const slimecclDevicePathInfo before = pathOf(comm);
          allgatherRound(rank, comm, gpu, send, recv, round);
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(send.data, count, slimecclInt32, next, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(got.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          gpu.sync();
          checkGpuToGpu(comm, before, 3, 0);
          const std::vector<int32_t> other = got.read();
          for (size_t i = 0; i < count; ++i) RANK_CHECK(other[i] == valueOf(prev, i, round), "Recv element ", i);
        }
      },
      linesOff(copyKernelOff()));
}

// Runs with SLIMECCL_GPU_BROADCAST_ALGO set to `algo`.
RunOptions broadcastAlgo(const std::string& algo, RunOptions options = {}) {
  options.env["SLIMECCL_GPU_BROADCAST_ALGO"] = algo;
  return options;
}

// Broadcasts on a rank by the forced scatter `algo`, which 3 or more ranks take (2 take the root's
// copies, by copy engine: the copy kernel is off): sizes from one element to several rounds of a relay's pieces, every
// root, in and out of place, at the buffers' start and one element past it (not 16-byte aligned), then the largest
// captured into a graph and replayed with new values each time.
void broadcastSweep(int rank, slimecclComm_t comm, const char* algo) {
  RankGpu gpu(rank);
  const char* expected = kRanks >= 3 ? algo : "root";
  const size_t largest = (size_t{50} << 20) / sizeof(int32_t) + 3;
  Ints send(largest + 1), recv(largest + 1);
  for (size_t count : {size_t{1}, size_t{1025}, (size_t{1} << 18) + 7, largest})
    for (size_t at : {size_t{0}, size_t{1}})
      for (int root = 0; root < kRanks; ++root)
        for (bool inPlace : {false, true}) {
          if ((count == largest || at == 1) && root != 0) continue;
          const int round = root * 4 + (inPlace ? 1 : 0) + static_cast<int>(at) * 2;
          int32_t* source = (inPlace ? recv.data : send.data) + at;
          if (rank == root) {
            // From pageable memory the copy may return before its bytes land, and the op's stream does
            // not wait for the legacy stream.
            CUDA_RANK_CHECK(cudaMemcpy(source, valuesOf(root, count, 0, round).data(), count * sizeof(int32_t),
                                       cudaMemcpyHostToDevice));
            CUDA_RANK_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
          }
          const slimecclDevicePathInfo before = pathOf(comm);
          RANK_CHECK_SUCCESS(slimecclBroadcast(source, recv.data + at, count, slimecclInt32, root, comm, gpu.stream),
                             comm);
          gpu.sync();
          checkGpuToGpu(comm, before, 1, 0);
          slimecclOpRoute route;
          RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
          RANK_CHECK(strcmp(route.algorithm, expected) == 0, "route algorithm '", route.algorithm, "'");
          const std::vector<int32_t> got = recv.read();
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[at + i] == valueOf(root, i, round), "count ", count, " at ", at, " root ", root,
                       " in place ", inPlace, " element ", i);
        }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const int root = kRanks - 1;
  CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
  RANK_CHECK_SUCCESS(slimecclBroadcast(send.data, recv.data, largest, slimecclInt32, root, comm, gpu.stream), comm);
  CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
  CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 5; ++replay) {
    if (rank == root) send.write(valuesOf(root, largest, 0, 100 + replay));
    CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
    gpu.sync();
    const std::vector<int32_t> got = recv.read();
    for (size_t i = 0; i < largest; ++i)
      RANK_CHECK(got[i] == valueOf(root, i, 100 + replay), "replay ", replay, " element ", i);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// The copy engines' relay: the root scatters the buffer in rounds and the others pass their pieces on.
TEST_P(GpuDirect, BroadcastRelaysOnThreeOrMoreRanks) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks, [](int rank, slimecclComm_t comm) { broadcastSweep(rank, comm, "scatter_ag"); },
      linesOff(broadcastAlgo("scatter_ag", copyKernelOff())));
}

// One kernel per rank: each non-root rank reads its share of the root's buffer and writes it into
// every rank's.
TEST_P(GpuDirect, BroadcastPullsSharesOnThreeOrMoreRanks) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks, [](int rank, slimecclComm_t comm) { broadcastSweep(rank, comm, "scatter_pull"); },
      linesOff(broadcastAlgo("scatter_pull", copyKernelOff())));
}

// The copies of a captured graph that write [dst, dst + bytes) from [src, src + bytes): their sizes.
std::vector<size_t> copiesWithin(cudaGraph_t graph, const void* dst, const void* src, size_t bytes) {
  size_t count = 0;
  CUDA_RANK_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CUDA_RANK_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  const auto inside = [bytes](const char* p, const void* begin) {
    return p >= static_cast<const char*>(begin) && p < static_cast<const char*>(begin) + bytes;
  };
  // The driver's call: the runtime's knows no stream memory operation nodes and fails on them.
  using NodeTypeOf = CUresult (*)(CUgraphNode, CUgraphNodeType*);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  CUDA_RANK_CHECK(cudaGetDriverEntryPointByVersion("cuGraphNodeGetType", &entry, 12000, cudaEnableDefault, &found));
  RANK_CHECK(found == cudaDriverEntryPointSuccess, "no cuGraphNodeGetType");
  const auto typeOf = reinterpret_cast<NodeTypeOf>(entry);
  std::vector<size_t> sizes;
  for (cudaGraphNode_t node : nodes) {
    CUgraphNodeType type;
    RANK_CHECK(typeOf(node, &type) == CUDA_SUCCESS, "cuGraphNodeGetType failed");
    if (type != CU_GRAPH_NODE_TYPE_MEMCPY) continue;
    cudaMemcpy3DParms copy{};
    CUDA_RANK_CHECK(cudaGraphMemcpyNodeGetParams(node, &copy));
    const char* to = static_cast<const char*>(copy.dstPtr.ptr) + copy.dstPos.x;
    const char* from = static_cast<const char*>(copy.srcPtr.ptr) + copy.srcPos.x;
    if (inside(to, dst) && inside(from, src))
      sizes.push_back(copy.extent.width * copy.extent.height * copy.extent.depth);
  }
  return sizes;
}

// A copy within a GPU (an out-of-place AllGather's or Broadcast's own block, an AlltoAll's block to
// itself) goes as pieces of at most `pieceBytes` (SLIMECCL_GPU_LOCAL_COPY_PIECE_BYTES, `setting`;
// 0: whole), so that a GEMM beside it keeps its speed: captured into a graph, a block of 64 MiB and
// 12 bytes is that many copies; queued and replayed, the data arrive.
void copiesWithinAGpuGoInPieces(Launch launch, const char* setting, size_t pieceBytes) {
  RunOptions options;
  if (setting != nullptr) options.env["SLIMECCL_GPU_LOCAL_COPY_PIECE_BYTES"] = setting;
  runRanks(
      launch, kRanks,
      [pieceBytes](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = (size_t{64} << 20) / sizeof(int32_t) + 3, bytes = count * sizeof(int32_t);
        const size_t expected = pieceBytes == 0 ? 1 : (bytes + pieceBytes - 1) / pieceBytes;
        Ints send(count * kRanks), recv(count * kRanks);
        send.write(valuesOf(rank, count * kRanks));
        enum { kAllGather, kAlltoAll, kBroadcast };
        for (int op : {kAllGather, kAlltoAll, kBroadcast}) {
          const auto queue = [&] {
            if (op == kAllGather)
              return slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream);
            if (op == kAlltoAll) return slimecclAlltoAll(send.data, recv.data, count, slimecclInt32, comm, gpu.stream);
            return slimecclBroadcast(send.data, recv.data, count, slimecclInt32, 0, comm, gpu.stream);
          };
          // Where the op's copy within this GPU goes, and from where (the Broadcast's only at its root).
          const int32_t* ownDst = op == kBroadcast ? recv.data : recv.data + rank * count;
          const int32_t* ownSrc = op == kAlltoAll ? send.data + rank * count : send.data;
          const auto check = [&](const char* how) {
            const std::vector<int32_t> got = recv.read();
            for (int r = 0; r < (op == kBroadcast ? 1 : kRanks); ++r)
              for (size_t i = 0; i < count; ++i) {
                const int32_t want = op == kAllGather  ? valueOf(r, i)
                                     : op == kAlltoAll ? valueOf(r, rank * count + i)
                                                       : valueOf(0, i);
                RANK_CHECK(got[r * count + i] == want, how, " op ", op, " block ", r, " element ", i);
              }
          };
          recv.write(std::vector<int32_t>(count * kRanks, -1));
          RANK_CHECK_SUCCESS(queue(), comm);
          gpu.sync();
          check("queued");
          cudaGraph_t graph = nullptr;
          cudaGraphExec_t exec = nullptr;
          CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
          RANK_CHECK_SUCCESS(queue(), comm);
          CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
          const std::vector<size_t> pieces = copiesWithin(graph, ownDst, ownSrc, bytes);
          // On 3 or more ranks the root's kernel copies its Broadcast buffer (scatter_pull).
          const bool copiesWithinGpu = op != kBroadcast || (rank == 0 && kRanks <= 2);
          RANK_CHECK(pieces.size() == (copiesWithinGpu ? expected : 0u), "op ", op, ": ", pieces.size(),
                     " copies within the GPU");
          size_t total = 0;
          for (size_t piece : pieces) {
            RANK_CHECK(pieceBytes == 0 || piece <= pieceBytes, "op ", op, ": a copy of ", piece,
                       " bytes within the GPU");
            total += piece;
          }
          RANK_CHECK(total == (copiesWithinGpu ? bytes : 0), "op ", op, ": ", total, " bytes copied within the GPU");
          CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
          recv.write(std::vector<int32_t>(count * kRanks, -1));
          CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
          gpu.sync();
          check("replayed");
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
        }
        checkGpuToGpu(comm, slimecclDevicePathInfo{}, 6, 0);
      },
      linesOff(options));
}

TEST_P(GpuDirect, CopiesWithinAGpuGoInPieces) {
  SKIP_WITHOUT_GPUS();
  copiesWithinAGpuGoInPieces(GetParam(), nullptr, size_t{64} << 20);
  copiesWithinAGpuGoInPieces(GetParam(), "16M", size_t{16} << 20);
  copiesWithinAGpuGoInPieces(GetParam(), "0", 0);
}

// With SLIMECCL_GPU_SM_COPY_BLOCKS=1 the kernel's one block runs every copy of an op (fewer blocks
// than copies) and every chunk of each, up to the AllGather's and AlltoAll's bound (the largest op
// here).
TEST_P(GpuDirect, OneBlockOfTheKernelRunsEveryCopy) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GPU_SM_COPY_BLOCKS"] = "1";
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        for (size_t count : {size_t{1}, size_t{4099}, kernelLimit(CopyOp::kAllGather) / sizeof(int32_t) / kRanks}) {
          Ints send(count), recv(count * kRanks), asend(count * kRanks), arecv(count * kRanks);
          send.write(valuesOf(rank, count));
          asend.write(valuesOf(rank, count * kRanks));
          const slimecclDevicePathInfo before = pathOf(comm);
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
          RANK_CHECK_SUCCESS(slimecclAlltoAll(asend.data, arecv.data, count, slimecclInt32, comm, gpu.stream), comm);
          gpu.sync();
          checkGpuToGpu(comm, before, 2, 2);
          const std::vector<int32_t> got = recv.read(), agot = arecv.read();
          for (int r = 0; r < kRanks; ++r)
            for (size_t i = 0; i < count; ++i) {
              RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather count ", count, " block ", r, " element ", i);
              RANK_CHECK(agot[r * count + i] == valueOf(r, rank * count + i), "AlltoAll count ", count, " from ", r,
                         " element ", i);
            }
        }
      },
      linesOff(options));
}

INSTANTIATE_TEST_SUITE_P(Layouts, GpuDirect, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const ::testing::TestParamInfo<Launch>& info) {
                           return std::string(launchName(info.param));
                         });

// One thread drives every rank's GPU, as nccl-tests -g N does, every call inside one group:
// an AllGather on every rank, then three messages from each rank to the next. Returns 0 when the
// data and the paths are right, else which step failed.
int driveEveryRankFromOneThread(const std::vector<slimecclComm_t>& comms) {
  const size_t count = 4099;
  std::vector<cudaStream_t> cuda(kRanks);
  std::vector<slimecclStream_t> streams(kRanks);
  std::vector<int32_t*> send(kRanks), recv(kRanks), msgs(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    cudaSetDevice(r);
    cudaStreamCreateWithFlags(&cuda[r], cudaStreamNonBlocking);
    if (slimecclStreamCreateFromCuda(&streams[r], cuda[r]) != slimecclSuccess) return 3;
    cudaMalloc(reinterpret_cast<void**>(&send[r]), count * sizeof(int32_t));
    cudaMalloc(reinterpret_cast<void**>(&recv[r]), count * kRanks * sizeof(int32_t));
    cudaMalloc(reinterpret_cast<void**>(&msgs[r]), 3 * count * sizeof(int32_t));
    const std::vector<int32_t> mine = valuesOf(r, count);
    cudaMemcpy(send[r], mine.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice);
  }
  // The copies from pageable memory may return before their bytes land; the ops' streams do not wait
  // for the legacy stream.
  for (int r = 0; r < kRanks; ++r) {
    cudaSetDevice(r);
    cudaStreamSynchronize(cudaStreamLegacy);
  }
  if (slimecclGroupStart() != slimecclSuccess) return 4;
  for (int r = 0; r < kRanks; ++r)
    if (slimecclAllGather(send[r], recv[r], count, slimecclInt32, comms[r], streams[r]) != slimecclSuccess) return 5;
  if (slimecclGroupEnd() != slimecclSuccess) return 6;
  if (slimecclGroupStart() != slimecclSuccess) return 7;
  for (int r = 0; r < kRanks; ++r)
    for (int k = 0; k < 3; ++k)
      if (slimecclSend(send[r], count, slimecclInt32, (r + 1) % kRanks, comms[r], streams[r]) != slimecclSuccess ||
          slimecclRecv(msgs[r] + k * count, count, slimecclInt32, (r + kRanks - 1) % kRanks, comms[r], streams[r]) !=
              slimecclSuccess)
        return 8;
  if (slimecclGroupEnd() != slimecclSuccess) {
    fprintf(stderr, "%s\n", slimecclGetLastError(nullptr));
    return 9;
  }
  for (int r = 0; r < kRanks; ++r) {
    cudaSetDevice(r);
    if (cudaStreamSynchronize(cuda[r]) != cudaSuccess) return 10;
    std::vector<int32_t> gathered(count * kRanks), got(3 * count);
    cudaMemcpy(gathered.data(), recv[r], gathered.size() * sizeof(int32_t), cudaMemcpyDeviceToHost);
    cudaMemcpy(got.data(), msgs[r], got.size() * sizeof(int32_t), cudaMemcpyDeviceToHost);
    for (int from = 0; from < kRanks; ++from)
      for (size_t i = 0; i < count; ++i)
        if (gathered[from * count + i] != valueOf(from, i)) return 11;
    for (size_t i = 0; i < 3 * count; ++i)
      if (got[i] != valueOf((r + kRanks - 1) % kRanks, i % count)) return 12;
    slimecclDevicePathInfo info{};
    slimecclCommGetDevicePathInfo(comms[r], &info);
    if (info.gpuToGpu != 1 || info.opsGpuToGpu != 7 || info.opsBySms != 7 || info.opsStaged != 0) return 13;
  }
  for (int r = 0; r < kRanks; ++r) {
    slimecclStreamDestroy(streams[r]);
    if (slimecclCommDestroy(comms[r]) != slimecclSuccess) return 14;
  }
  return 0;
}

// The library's settings for the children of the one-thread tests.
const std::map<std::string, std::string> kOneThreadEnv{{"SLIMECCL_TIMEOUT_MS", "20000"},
                                                       {"SLIMECCL_GPU_LINE_BYTES", "0"}};

// Communicators from slimecclCommInitAll with a device list.
TEST(GpuDirectOneThread, DrivesEveryRankOfCommInitAll) {
  SKIP_WITHOUT_GPUS();
  inChild(kOneThreadEnv, [] {
    std::vector<int> devices(kRanks);
    for (int r = 0; r < kRanks; ++r) devices[r] = r;
    std::vector<slimecclComm_t> comms(kRanks);
    if (slimecclCommInitAll(comms.data(), kRanks, devices.data()) != slimecclSuccess) return 2;
    return driveEveryRankFromOneThread(comms);
  });
}

// Communicators made by slimecclCommInitRankConfig on threads, each naming its GPU in the config
// (so the path is set up at init, while every rank's thread runs), then driven from one thread.
TEST(GpuDirectOneThread, DrivesEveryRankOfCommsThatNamedTheirGpus) {
  SKIP_WITHOUT_GPUS();
  inChild(kOneThreadEnv, [] {
    slimecclUniqueId id;
    if (slimecclGetUniqueId(&id) != slimecclSuccess) return 2;
    std::vector<slimecclComm_t> comms(kRanks);
    std::vector<slimecclResult_t> results(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
        config.cudaDevice = r;
        results[r] = slimecclCommInitRankConfig(&comms[r], kRanks, id, r, &config);
      });
    for (std::thread& t : threads) t.join();
    for (slimecclResult_t rc : results)
      if (rc != slimecclSuccess) return 2;
    return driveEveryRankFromOneThread(comms);
  });
}

// The last rank, killed with SIGKILL in the middle of a 1 GiB AllGather (512 MiB per rank): each
// survivor's op ends with an error naming it (or naming the survivor that found it dead first),
// its stream drains and its GPU stays usable.
TEST(GpuDirectFaults, PeerKilledDuringALargeAllGather) {
  SKIP_WITHOUT_GPUS();
  runWithKilledPeer([](int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t) {
    constexpr size_t kCount = size_t{1} << 27;
    int32_t *send, *recv;
    cudaMalloc(reinterpret_cast<void**>(&send), kCount * sizeof(int32_t));
    cudaMalloc(reinterpret_cast<void**>(&recv), kCount * kRanks * sizeof(int32_t));
    // The victim queues one and is killed; the others queue several, and it dies during one of them.
    for (int i = 0; i < (rank == kRanks - 1 ? 1 : 20); ++i)
      if (slimecclAllGather(send, recv, kCount, slimecclInt32, comm, stream) != slimecclSuccess) {
        if (rank == kRanks - 1) _exit(4);
        break;
      }
  });
}

}  // namespace
}  // namespace slimeccl_test
