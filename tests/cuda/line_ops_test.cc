// Small ops by flagged lines (docs/cuda.md, "Small ops by flagged lines"): one kernel per op and
// rank moves the bytes through the peers' landing zones, with no host between the ranks. Every
// collective and Send/Recv in and out of place, across sizes that take one step and many; every
// datatype and operator of the reductions (bit for bit), PreMulSum; groups of many messages, to
// itself and in place; graphs replayed a thousand times, their kernels launched as dependents; ops
// of one comm on two streams; a mismatched call, a late peer, an abort and a killed peer, none of
// which leaves a stream waiting. Each test checks through slimecclCommGetDevicePathInfo and the
// op's route that the ops went by lines (or, past the bound, not). Runs SLIMECCL_TEST_GPUS ranks
// (default 2).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "buffers.h"
#include "device_values.h"
#include "gpu_ranks.h"
#include "harness.h"
#include "killed_peer.h"
#include "premul_sum_values.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {
namespace {

constexpr size_t kKiB = 1024;
// The tuner's bounds for 2 GPUs (algorithms/gpu_tuning.cc), as nccl-tests counts an op's bytes.
constexpr size_t kAllGatherBound = 512 * kKiB;
constexpr size_t kMessageBound = 512 * kKiB;
constexpr size_t kAllReduceBound = 256 * kKiB;
constexpr size_t kAlltoAllBound = 1024 * kKiB;

// Every op since `before` went GPU to GPU, `byLines` of them by flagged lines.
void checkByLines(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long ops,
                  unsigned long long byLines) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.gpuToGpu == 1 && now.flaggedLines == 1, "the comm has no flagged lines");
  RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == ops, "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu,
             " of ", ops);
  RANK_CHECK(now.opsByLines - before.opsByLines == byLines, "ops by lines: ", now.opsByLines - before.opsByLines,
             " of ", byLines);
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
}

void checkRouteIsLines(slimecclComm_t comm) {
  slimecclOpRoute route;
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(route.route == slimecclRouteGpuToGpu && strcmp(route.algorithm, "lines") == 0, "route ", route.route,
             " algorithm '", route.algorithm, "'");
}

// Counts of int32 per rank: one line, a few, a step's worth and one more, many steps on every lane,
// the bound and just past it (as the bound counts an AllGather's output).
std::vector<size_t> countsUpTo(size_t boundBytes, size_t ranksInBound) {
  const size_t atBound = boundBytes / sizeof(int32_t) / ranksInBound;
  return {1, 3, 2048, 2049, 70001, atBound, atBound + 1};
}

// The edges of a captured graph between kernel nodes, and of those the ones that let the next kernel
// launch while the one before runs (a dependent launch, compute capability 9.0 on).
struct KernelEdges {
  size_t all = 0, dependent = 0;
};

KernelEdges kernelEdgesOf(cudaGraph_t graph) {
  size_t count = 0;
  CUDA_RANK_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count));
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> data(count);
  CUDA_RANK_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count));
  KernelEdges edges;
  for (size_t i = 0; i < count; ++i) {
    cudaGraphNodeType a, b;
    CUDA_RANK_CHECK(cudaGraphNodeGetType(from[i], &a));
    CUDA_RANK_CHECK(cudaGraphNodeGetType(to[i], &b));
    if (a != cudaGraphNodeTypeKernel || b != cudaGraphNodeTypeKernel) continue;
    ++edges.all;
    edges.dependent += data[i].type == cudaGraphDependencyTypeProgrammatic ? 1 : 0;
  }
  return edges;
}

bool launchesDependents(int rank) {
  int major = 0;
  CUDA_RANK_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, rank % usableGpus()));
  return major >= 9;
}

class LineOps : public ::testing::TestWithParam<Launch> {};

TEST_P(LineOps, AllGatherAlltoAllBroadcastInAndOutOfPlace) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    for (size_t count : countsUpTo(kAllGatherBound, kRanks)) {
      const bool lines = count * sizeof(int32_t) * kRanks <= kAllGatherBound;
      const bool alltoallLines = count * sizeof(int32_t) * kRanks <= kAlltoAllBound;
      for (bool inPlace : {false, true}) {
        Ints send(count * kRanks), recv(count * kRanks);
        const slimecclDevicePathInfo before = pathOf(comm);
        // AllGather: in place, the rank's block already sits in recv.
        recv.write(valuesOf(rank, count), rank * count);
        send.write(valuesOf(rank, count));
        const int32_t* source = inPlace ? recv.data + rank * count : send.data;
        RANK_CHECK_SUCCESS(slimecclAllGather(source, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
        gpu.sync();
        std::vector<int32_t> got = recv.read();
        for (int r = 0; r < kRanks; ++r)
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather count ", count, " in place ", inPlace, " block ",
                       r, " element ", i);
        if (lines) checkRouteIsLines(comm);
        // AlltoAll: block p of rank r's input goes to rank p.
        Ints& a = inPlace ? recv : send;
        a.write(valuesOf(rank, count * kRanks));
        RANK_CHECK_SUCCESS(slimecclAlltoAll(a.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
        gpu.sync();
        got = recv.read();
        for (int r = 0; r < kRanks; ++r)
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[r * count + i] == valueOf(r, rank * count + i), "AlltoAll count ", count, " in place ",
                       inPlace, " from ", r, " element ", i);
        // Broadcast from each root in turn.
        for (int root = 0; root < kRanks; ++root) {
          Ints& b = inPlace ? recv : send;
          if (rank == root) b.write(valuesOf(root, count, 0, root + 1));
          RANK_CHECK_SUCCESS(slimecclBroadcast(b.data, recv.data, count, slimecclInt32, root, comm, gpu.stream), comm);
          gpu.sync();
          got = recv.read();
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[i] == valueOf(root, i, root + 1), "Broadcast count ", count, " root ", root, " in place ",
                       inPlace, " element ", i);
        }
        const bool broadcastLines = count * sizeof(int32_t) <= kMessageBound;
        checkByLines(comm, before, 2 + kRanks,
                     (lines ? 1 : 0) + (alltoallLines ? 1 : 0) + (broadcastLines ? kRanks : 0));
      }
    }
  });
}

// Every datatype and operator of AllReduce, ReduceScatter and Reduce (the root moving), in and out
// of place, compared bit for bit: one line, an odd count of elements, and several steps per lane.
TEST_P(LineOps, EveryTypeAndOpOfTheReductions) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const slimecclDataType_t types[] = {slimecclInt8,    slimecclUint8,   slimecclInt32,   slimecclUint32,
                                        slimecclInt64,   slimecclUint64,  slimecclFloat16, slimecclFloat32,
                                        slimecclFloat64, slimecclBfloat16};
    DeviceBytes send(kRanks * 32 * kKiB * 8), recv(kRanks * 32 * kKiB * 8);
    unsigned long long ops = 0;
    const slimecclDevicePathInfo before = pathOf(comm);
    for (slimecclDataType_t type : types)
      for (slimecclRedOp_t op : kAllOps)
        for (size_t count : {size_t{1}, size_t{1031}, 32 * kKiB + 5}) {
          const size_t elem = datatypeSize(type);
          if (count * elem * kRanks > kMessageBound || count * elem > kAllReduceBound) continue;
          for (bool inPlace : {false, true}) {
            const ReductionValues values(type, op, kRanks, count * 31 + type * 7 + op);
            std::vector<char> input(count * kRanks * elem);
            values.fillInputs(input.data(), rank, 0, count * kRanks);
            DeviceBytes& source = inPlace ? recv : send;
            // AllReduce
            source.write(std::vector<char>(input.begin(), input.begin() + count * elem));
            RANK_CHECK_SUCCESS(slimecclAllReduce(source.data, recv.data, count, type, op, comm, gpu.stream), comm);
            gpu.sync();
            std::string wrong = values.resultMismatch(recv.read(0, count * elem).data(), 0, count);
            RANK_CHECK(wrong.empty(), "AllReduce type ", type, " op ", opName(op), " count ", count, " in place ",
                       inPlace, ": ", wrong);
            checkRouteIsLines(comm);
            // ReduceScatter: in place, the rank's block of the input is the output.
            source.write(input);
            char* out = inPlace ? recv.data + rank * count * elem : recv.data;
            RANK_CHECK_SUCCESS(slimecclReduceScatter(source.data, out, count, type, op, comm, gpu.stream), comm);
            gpu.sync();
            wrong = values.resultMismatch(recv.read(out - recv.data, count * elem).data(), rank * count, count);
            RANK_CHECK(wrong.empty(), "ReduceScatter type ", type, " op ", opName(op), " count ", count, " in place ",
                       inPlace, ": ", wrong);
            // Reduce
            const int root = static_cast<int>((count + type) % kRanks);
            source.write(std::vector<char>(input.begin(), input.begin() + count * elem));
            RANK_CHECK_SUCCESS(slimecclReduce(source.data, recv.data, count, type, op, root, comm, gpu.stream), comm);
            gpu.sync();
            if (rank == root) {
              wrong = values.resultMismatch(recv.read(0, count * elem).data(), 0, count);
              RANK_CHECK(wrong.empty(), "Reduce type ", type, " op ", opName(op), " count ", count, " in place ",
                         inPlace, ": ", wrong);
            }
            ops += 3;
          }
        }
    checkByLines(comm, before, ops, ops);
  });
}

// PreMulSum: each rank multiplies its own input by its scalar before it sends or reduces it, the
// scalar given at once or read from device memory when the kernel starts (so a value the stream
// wrote before the op, or before a graph's replay, counts).
TEST_P(LineOps, PreMulSumWithHostAndDeviceScalars) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const size_t count = 3001;
    DeviceBytes send(count * kRanks * 4), recv(count * kRanks * 4), scalarOnGpu(4);
    writePreMulInputs(rank, send, count * kRanks);
    auto expect = [&](const char* what, size_t first, int round) { expectPreMulSum(recv, what, count, first, round); };
    float hostScalar;
    slimecclRedOp_t immediate, onDevice;
    makePreMulSumOps(rank, comm, &hostScalar, scalarOnGpu.data, &immediate, &onDevice);
    const slimecclDevicePathInfo before = pathOf(comm);
    RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream),
                       comm);
    gpu.sync();
    expect("AllReduce, host scalar", 0, 0);
    for (int round : {1, 2}) {
      const float value = preMulScalar(rank, round);
      CUDA_RANK_CHECK(cudaMemcpyAsync(scalarOnGpu.data, &value, 4, cudaMemcpyHostToDevice, gpu.cuda));
      RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, onDevice, comm, gpu.stream),
                         comm);
      gpu.sync();
      expect("AllReduce, device scalar", 0, round);
    }
    RANK_CHECK_SUCCESS(slimecclReduceScatter(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream),
                       comm);
    gpu.sync();
    expect("ReduceScatter, host scalar", rank * count, 0);
    RANK_CHECK_SUCCESS(slimecclReduce(send.data, recv.data, count, slimecclFloat32, immediate, 0, comm, gpu.stream),
                       comm);
    gpu.sync();
    if (rank == 0) expect("Reduce, host scalar", 0, 0);
    checkByLines(comm, before, 5, 5);
  });
}

// Groups of Send/Recv: a ring out of place and in place (each rank's Recv overwrites the buffer its
// Send reads), several messages to one peer in a group (more steps than a lane has slots), a Send
// to itself, and messages past the bound beside small ones (those go on the board).
TEST_P(LineOps, SendRecvGroupsRingsSelfAndInPlace) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
    for (size_t count : {size_t{1}, size_t{2049}, kMessageBound / 4, kMessageBound / 4 + 1}) {
      const bool lines = count * sizeof(int32_t) <= kMessageBound;
      for (bool inPlace : {false, true}) {
        Ints out(count), in(count);
        out.write(valuesOf(rank, count, 0, 1));
        const slimecclDevicePathInfo before = pathOf(comm);
        Ints& target = inPlace ? out : in;
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        RANK_CHECK_SUCCESS(slimecclSend(out.data, count, slimecclInt32, next, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(target.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        gpu.sync();
        const std::vector<int32_t> got = target.read();
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[i] == valueOf(prev, i, 1), "ring count ", count, " in place ", inPlace, " element ", i);
        // In place, the overwritten Send's bytes go through host staging where they are not by lines.
        if (lines || !inPlace) checkByLines(comm, before, 2, lines ? 2 : 0);
      }
    }
    // Six messages each way with the next rank and the previous one, and two to itself, in one group.
    const size_t count = 40000;
    Ints out(6 * count), in(6 * count), self(2 * count);
    out.write(valuesOf(rank, 6 * count, 0, 2));
    const slimecclDevicePathInfo before = pathOf(comm);
    RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
    for (int k = 0; k < 6; ++k) {
      RANK_CHECK_SUCCESS(slimecclRecv(in.data + k * count, count, slimecclInt32, prev, comm, gpu.stream), comm);
      RANK_CHECK_SUCCESS(slimecclSend(out.data + k * count, count, slimecclInt32, next, comm, gpu.stream), comm);
    }
    for (int k = 0; k < 2; ++k) {
      RANK_CHECK_SUCCESS(slimecclSend(out.data + k * count, count, slimecclInt32, rank, comm, gpu.stream), comm);
      RANK_CHECK_SUCCESS(slimecclRecv(self.data + k * count, count, slimecclInt32, rank, comm, gpu.stream), comm);
    }
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    gpu.sync();
    const std::vector<int32_t> got = in.read(), mine = self.read();
    for (size_t i = 0; i < 6 * count; ++i) RANK_CHECK(got[i] == valueOf(prev, i, 2), "message element ", i);
    for (size_t i = 0; i < 2 * count; ++i) RANK_CHECK(mine[i] == valueOf(rank, i, 2), "to itself, element ", i);
    checkByLines(comm, before, 16, 16);
  });
}

// One graph of an AllReduce, an AllGather and a ring of Send/Recv in place, captured in the global
// mode (thread-local where the ranks are threads), replayed 1000 times with new inputs; between
// replays, ops of the same comm run outside the graph.
TEST_P(LineOps, CapturedGraphReplaysAThousandTimes) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const size_t count = 1025;
    const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
    Ints send(count), reduced(count), gathered(count * kRanks), ring(count), eager(count * kRanks);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    // Ranks that are threads share the process, where a global capture would forbid a peer's
    // allocations (the test's own) meanwhile.
    CUDA_RANK_CHECK(cudaStreamBeginCapture(
        gpu.cuda, GetParam() == Launch::kThreads ? cudaStreamCaptureModeThreadLocal : cudaStreamCaptureModeGlobal));
    RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, reduced.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                       comm);
    RANK_CHECK_SUCCESS(slimecclAllGather(send.data, gathered.data, count, slimecclInt32, comm, gpu.stream), comm);
    RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
    RANK_CHECK_SUCCESS(slimecclSend(ring.data, count, slimecclInt32, next, comm, gpu.stream), comm);
    RANK_CHECK_SUCCESS(slimecclRecv(ring.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
    // The three kernels follow each other, each launched as a dependent of the one before where the
    // GPU can (its launch overlaps the end of the kernel before).
    const KernelEdges edges = kernelEdgesOf(graph);
    RANK_CHECK(edges.all == 2, "edges between kernels: ", edges.all, " of 2");
    RANK_CHECK(edges.dependent == (launchesDependents(rank) ? 2u : 0u), "dependent launches: ", edges.dependent);
    CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    checkByLines(comm, slimecclDevicePathInfo{}, 4, 4);
    for (int replay = 0; replay < 1000; ++replay) {
      const std::vector<int32_t> input = valuesOf(rank, count, 0, replay);
      CUDA_RANK_CHECK(
          cudaMemcpyAsync(send.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
      CUDA_RANK_CHECK(
          cudaMemcpyAsync(ring.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
      CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
      if (replay % 100 == 50)
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, eager.data, count, slimecclInt32, comm, gpu.stream), comm);
      if (replay % 97 != 0 && replay % 100 != 50 && replay != 999) continue;
      gpu.sync();
      const std::vector<int32_t> sum = reduced.read(), all = gathered.read(), passed = ring.read();
      for (size_t i = 0; i < count; ++i) {
        int32_t want = 0;
        for (int r = 0; r < kRanks; ++r) want += valueOf(r, i, replay);
        RANK_CHECK(sum[i] == want, "replay ", replay, " AllReduce element ", i);
        RANK_CHECK(passed[i] == valueOf(prev, i, replay), "replay ", replay, " ring element ", i);
        for (int r = 0; r < kRanks; ++r)
          RANK_CHECK(all[r * count + i] == valueOf(r, i, replay), "replay ", replay, " AllGather block ", r);
      }
      if (replay % 100 == 50) {
        const std::vector<int32_t> outside = eager.read();
        for (int r = 0; r < kRanks; ++r)
          RANK_CHECK(outside[r * count] == valueOf(r, 0, replay), "replay ", replay, " AllGather outside the graph");
      }
    }
    gpu.sync();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  });
}

// As PyTorch captures: ops warm up on one stream, then a stream the library has never seen is
// captured in the global mode and bound inside the capture; the capture must survive it, and the
// graph replays with new inputs.
TEST(LineOpsCapture, AStreamFirstSeenInsideACaptureIsBoundWithoutEndingIt) {
  SKIP_WITHOUT_GPUS();
  runRanks(Launch::kForkedShm, kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu warm(rank);
    const size_t count = 1025;
    Ints send(count), sum(count);
    send.write(valuesOf(rank, count));
    RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, sum.data, count, slimecclInt32, slimecclSum, comm, warm.stream),
                       comm);
    warm.sync();
    cudaStream_t capture = nullptr;
    CUDA_RANK_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_RANK_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
    slimecclStream_t captured = nullptr;
    RANK_CHECK_SUCCESS(slimecclStreamCreateFromCuda(&captured, capture), comm);
    RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, sum.data, count, slimecclInt32, slimecclSum, comm, captured), comm);
    CUDA_RANK_CHECK(cudaStreamEndCapture(capture, &graph));
    CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 1; replay <= 10; ++replay) {
      const std::vector<int32_t> input = valuesOf(rank, count, 0, replay);
      CUDA_RANK_CHECK(
          cudaMemcpyAsync(send.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, capture));
      CUDA_RANK_CHECK(cudaGraphLaunch(exec, capture));
      CUDA_RANK_CHECK(cudaStreamSynchronize(capture));
      const std::vector<int32_t> got = sum.read();
      for (size_t i = 0; i < count; ++i) {
        int32_t want = 0;
        for (int r = 0; r < kRanks; ++r) want += valueOf(r, i, replay);
        RANK_CHECK(got[i] == want, "replay ", replay, " element ", i);
      }
    }
    checkByLines(comm, slimecclDevicePathInfo{}, 2, 2);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(captured), nullptr);
    cudaStreamDestroy(capture);
  });
}

// A comm's ops alternate between two streams, by lines and (past the bound) not: each reads what the
// one before wrote, so each must start after the one before has ended.
TEST_P(LineOps, OpsOfOneCommOnTwoStreamsKeepTheirCallOrder) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu first(rank), second(rank);
    const size_t small = 1000, large = kAllGatherBound / sizeof(int32_t);
    Ints a(large), b(large);
    a.write(valuesOf(rank, large));
    const slimecclDevicePathInfo before = pathOf(comm);
    for (int round = 0; round < 6; ++round) {
      const size_t count = round % 3 == 2 ? large : small;
      RankGpu& gpu = round % 2 == 0 ? first : second;
      Ints& from = round % 2 == 0 ? a : b;
      Ints& to = round % 2 == 0 ? b : a;
      RANK_CHECK_SUCCESS(slimecclAllReduce(from.data, to.data, count, slimecclInt32, slimecclMax, comm, gpu.stream),
                         comm);
    }
    first.sync();
    second.sync();
    // The max of every rank's values, carried through: the largest rank's values, where each op
    // covered them.
    const std::vector<int32_t> got = a.read();
    for (size_t i = 0; i < small; ++i) RANK_CHECK(got[i] == valueOf(kRanks - 1, i), "element ", i);
    checkByLines(comm, before, 6, 4);
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, LineOps, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const ::testing::TestParamInfo<Launch>& info) {
                           return std::string(launchName(info.param));
                         });

// Ranks that are threads of this process make a comm, use it and destroy it, twice: the second
// comm's zones and kernels know nothing of the first's.
TEST(LineOpsThreads, ASecondCommOfTheProcessAfterTheFirstEnded) {
  SKIP_WITHOUT_GPUS();
  for (int comm = 0; comm < 2; ++comm)
    runRanks(Launch::kThreads, kRanks, [comm](int rank, slimecclComm_t c) {
      RankGpu gpu(rank);
      const size_t count = kAllReduceBound / sizeof(int32_t) - 1;
      Ints send(count), sum(count), all(count * kRanks);
      send.write(valuesOf(rank, count, 0, comm));
      for (int round = 0; round < 20; ++round) {
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, sum.data, count, slimecclInt32, slimecclSum, c, gpu.stream), c);
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, all.data, count / kRanks, slimecclInt32, c, gpu.stream), c);
      }
      gpu.sync();
      const std::vector<int32_t> got = sum.read();
      for (size_t i = 0; i < count; ++i) {
        int32_t want = 0;
        for (int r = 0; r < kRanks; ++r) want += valueOf(r, i, comm);
        RANK_CHECK(got[i] == want, "comm ", comm, " element ", i);
      }
      checkByLines(c, slimecclDevicePathInfo{}, 40, 40);
    });
}

// SLIMECCL_GPU_LINE_BYTES sets the bound (rank 0's counts); 0 sets up no landing zones.
TEST(LineOpsSetting, TheBoundComesFromRankZerosSetting) {
  SKIP_WITHOUT_GPUS();
  for (const char* setting : {"4096", "0"}) {
    RunOptions options;
    options.env["SLIMECCL_GPU_LINE_BYTES"] = setting;
    runRanks(
        Launch::kForkedShm, kRanks,
        [setting](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank);
          const size_t atBound = 4096 / sizeof(int32_t) / kRanks;
          Ints send(atBound + 1), recv((atBound + 1) * kRanks);
          const slimecclDevicePathInfo before = pathOf(comm);
          for (size_t count : {atBound, atBound + 1}) {
            RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
            gpu.sync();
          }
          const slimecclDevicePathInfo after = pathOf(comm);
          const bool off = strcmp(setting, "0") == 0;
          RANK_CHECK(after.flaggedLines == (off ? 0 : 1), "flagged lines set up: ", after.flaggedLines);
          RANK_CHECK(after.opsByLines - before.opsByLines == (off ? 0u : 1u),
                     "ops by lines: ", after.opsByLines - before.opsByLines);
          RANK_CHECK(after.opsGpuToGpu - before.opsGpuToGpu == 2, "GPU to GPU: ", after.opsGpuToGpu);
        },
        options);
  }
}

// The fault tests end their comms themselves (by abort).
RunOptions faultOptions() {
  RunOptions options;
  options.teardown = Teardown::kNone;
  return options;
}

// Rank 1 calls an AllReduce of another count than rank 0's: the kernels that receive find the
// other's call in the first line, stop, and the watchdog fails both comms with a sentence naming
// both calls; no stream waits, and later calls say why.
TEST(LineOpsFaults, AMismatchedCallFailsTheCommWithASentence) {
  SKIP_WITHOUT_GPUS();
  RunOptions options = faultOptions();
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        Ints send(64), recv(64);
        const size_t count = rank == 1 ? 16 : 8;
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        gpu.sync();
        slimecclResult_t async = slimecclSuccess;
        for (int i = 0; i < 200 && async == slimecclSuccess; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          RANK_CHECK_SUCCESS(slimecclCommGetAsyncError(comm, &async), nullptr);
        }
        const std::string why = slimecclGetLastError(comm);
        RANK_CHECK(async == slimecclInvalidUsage || async == slimecclRemoteError, "async error ", async, ": ", why);
        if (async == slimecclInvalidUsage)
          RANK_CHECK(why.find("does not match peer") != std::string::npos &&
                         why.find("AllReduce (count 8") != std::string::npos &&
                         why.find("AllReduce (count 16") != std::string::npos,
                     why);
        RANK_CHECK(
            slimecclAllReduce(send.data, recv.data, 8, slimecclInt32, slimecclSum, comm, gpu.stream) != slimecclSuccess,
            "a call after the failure");
        slimecclCommAbort(comm);
      },
      options);
}

// Rank 1 reaches its AllReduce 3 s late; rank 0 aborts while its kernel waits, which lets the
// stream go within 1.5 s.
TEST(LineOpsFaults, AbortReleasesAKernelWaitingForALatePeer) {
  SKIP_WITHOUT_GPUS();
  RunOptions options = faultOptions();
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        Ints send(1000), recv(1000);
        if (rank == 1) reachTheNextOpLate(gpu);
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, 1000, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        endAbortTest(comm, gpu, rank, "rank 1");
      },
      options);
}

// With SLIMECCL_TIMEOUT_MS=2500, rank 1 reaches the op 6 s late: rank 0's comm fails with a
// timeout naming the op, its stream is let go, and rank 1's kernel, once it runs, is let go too. The
// timeout also bounds the comm's setup, which a GPU's first use in a process can take over a second of.
TEST(LineOpsFaults, AKernelPastTheTimeoutFailsTheComm) {
  SKIP_WITHOUT_GPUS();
  RunOptions options = faultOptions();
  options.env["SLIMECCL_TIMEOUT_MS"] = "2500";
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        Ints send(1000), recv(1000 * kRanks);
        if (rank == 1) reachTheNextOpLate(gpu, 6);
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, 1000, slimecclInt32, comm, gpu.stream), comm);
        const auto start = std::chrono::steady_clock::now();
        gpu.sync();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        slimecclResult_t async = slimecclSuccess;
        RANK_CHECK_SUCCESS(slimecclCommGetAsyncError(comm, &async), nullptr);
        const std::string why = slimecclGetLastError(comm);
        if (rank == 0) {
          RANK_CHECK(seconds < 5.5, "the stream waited ", seconds, " s");
          RANK_CHECK(async == slimecclTimeout && why.find("AllGather (count 1000") != std::string::npos &&
                         why.find("SLIMECCL_TIMEOUT_MS") != std::string::npos,
                     "async error ", async, ": ", why);
        } else {
          RANK_CHECK(async != slimecclSuccess, "rank 1's comm should have failed too");
        }
        slimecclCommAbort(comm);
      },
      options);
}

// Rank 1 reaches each of three AllGathers a second late, within SLIMECCL_TIMEOUT_MS=2000: many
// threads of rank 0's kernels report their long waits, and those waits end in whatever order. The
// comm then idles past the timeout and must not be timed out by a report left standing.
TEST(LineOpsFaults, LongWaitsThatEndedLeaveNoTimeoutBehind) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_TIMEOUT_MS"] = "2000";
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = kAllGatherBound / sizeof(int32_t) / kRanks - 1000;
        Ints send(count), recv(count * kRanks);
        send.write(std::vector<int32_t>(count, rank + 1));
        const slimecclDevicePathInfo before = pathOf(comm);
        for (int round = 0; round < 3; ++round) {
          if (rank == 1) reachTheNextOpLate(gpu, 1);
          RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
          gpu.sync();
        }
        checkByLines(comm, before, 3, 3);
        std::this_thread::sleep_for(std::chrono::seconds(3));
        slimecclResult_t async = slimecclSuccess;
        RANK_CHECK_SUCCESS(slimecclCommGetAsyncError(comm, &async), nullptr);
        RANK_CHECK(async == slimecclSuccess, "the comm failed while idle: ", slimecclGetLastError(comm));
        const std::vector<int32_t> got = recv.read();
        for (int r = 0; r < kRanks; ++r)
          RANK_CHECK(std::all_of(got.begin() + static_cast<std::ptrdiff_t>(r * count),
                                 got.begin() + static_cast<std::ptrdiff_t>((r + 1) * count),
                                 [r](int32_t v) { return v == r + 1; }),
                     "rank ", r, "'s block");
      },
      options);
}

// The last rank is killed while the others' kernels wait for it: their streams drain and the
// comm fails naming it.
TEST(LineOpsFaults, PeerKilledDuringSmallOps) {
  SKIP_WITHOUT_GPUS();
  runWithKilledPeer([](int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t) {
    int32_t *send, *recv;
    cudaMalloc(reinterpret_cast<void**>(&send), 4096);
    cudaMalloc(reinterpret_cast<void**>(&recv), 4096);
    // The victim queues one and is killed; the others queue many, and wait in the second.
    for (int i = 0; i < (rank == kRanks - 1 ? 1 : 50); ++i)
      if (slimecclAllReduce(send, recv, 1024, slimecclInt32, slimecclSum, comm, stream) != slimecclSuccess) {
        if (rank == kRanks - 1) _exit(4);
        break;
      }
  });
}

}  // namespace
}  // namespace slimeccl_test
