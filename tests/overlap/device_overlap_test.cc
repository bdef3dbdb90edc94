// AllGatherGemm and AllGatherOverlap on device buffers (docs/overlap.md): C bit for bit against
// cuBLASLt's first-ranked algorithm run block by block on the same gathered A, for bfloat16, float16, float and double,
// odd shapes, empty K, the gathered A in the library's workspace, a caller's buffer and in place; TF32 only when asked
// for; the blocks handed to AllGatherOverlap's callback in landing order, with the stream ordered after each block; a
// captured graph replayed with new inputs; an abort releasing a stream that waits for a block; a peer killed mid-way;
// host staging; peers running a plain AllGather against it; a callback calling slimeccl; and the refusals. The tests of
// the GPU path check that the AllGathers went GPU to GPU with their blocks handed as they landed
// (slimecclDevicePathInfo::overlapAllGathers). Runs SLIMECCL_TEST_GPUS ranks (default 2); skipped without that many
// GPUs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_ranks.h"
#include "harness.h"
#include "killed_peer.h"
#include "device_matrices.h"
#include "lt_gemm.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct Shape {
  size_t mLocal, k, n;
};

// C of the gathered A as the library computes it: one GEMM per rank's row block, each block of A
// read from `gathered` except rank `ownRank`'s, read from `ownBlock` when that is given (the
// library reads the own block where the caller passed it, and the pointers' alignments choose
// cuBLASLt's algorithm).
std::vector<char> referenceC(slimecclDataType_t type, const Shape& s, const MatrixBytes& gathered, const MatrixBytes& b,
                             cudaStream_t stream, bool tf32 = false, int ownRank = -1, const void* ownBlock = nullptr) {
  MatrixBytes c(kRanks * s.mLocal * s.n * sizeOf(type));
  slimeccl_perf::LtGemm gemm(type, tf32);
  for (int r = 0; r < kRanks; ++r) {
    const void* aBlock = r == ownRank && ownBlock != nullptr
                             ? ownBlock
                             : static_cast<const void*>(gathered.data + r * s.mLocal * s.k * sizeOf(type));
    gemm.multiply(s.mLocal, s.k, s.n, aBlock, b.data, c.data + r * s.mLocal * s.n * sizeOf(type), stream);
  }
  CUDA_RANK_CHECK(cudaStreamSynchronize(stream));
  return c.read();
}

// The comm's AllGathers since `before` are `calls`, all GPU to GPU: overlapped, or (small ones, as
// a plain AllGather of their size would go) by flagged lines.
void checkOverlapped(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long calls) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.gpuToGpu == 1, "the comm has no GPU-to-GPU path");
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
  const unsigned long long overlapped = now.overlapAllGathers - before.overlapAllGathers,
                           byLines = now.opsByLines - before.opsByLines;
  RANK_CHECK(overlapped + byLines == calls, "overlapped AllGathers: ", overlapped, ", by lines: ", byLines, " of ",
             calls);
  RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == calls, "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu,
             " of ", calls);
}

enum class Gathered { kWorkspace, kCallerBuffer, kInPlace };

// One AllGatherGemm on `gpu`'s stream, C and the gathered A checked against the reference.
void gemmAndCheck(int rank, slimecclComm_t comm, RankGpu& gpu, slimecclDataType_t type, const Shape& s, Gathered where,
                  uint64_t call) {
  const size_t elem = sizeOf(type), aBlock = s.mLocal * s.k * elem;
  std::vector<std::vector<char>> blocks;
  for (int r = 0; r < kRanks; ++r) blocks.push_back(randomMatrix(type, s.mLocal * s.k, call * 100 + r));
  MatrixBytes aLocal(aBlock), gathered(aBlock * kRanks), b(s.k * s.n * elem), c(kRanks * s.mLocal * s.n * elem);
  MatrixBytes expectedGathered(aBlock * kRanks);
  aLocal.write(blocks[rank]);
  for (int r = 0; r < kRanks; ++r) expectedGathered.write(blocks[r], r * aBlock);
  b.write(randomMatrix(type, s.k * s.n, call * 100 + 99));
  const void* a = aLocal.data;
  if (where == Gathered::kInPlace) {
    gathered.write(blocks[rank], rank * aBlock);
    a = gathered.data + rank * aBlock;
  }
  const slimecclDevicePathInfo before = pathOf(comm);
  RANK_CHECK_SUCCESS(slimecclAllGatherGemm(a, where == Gathered::kWorkspace ? nullptr : gathered.data, b.data, c.data,
                                           s.mLocal, s.n, s.k, type, comm, gpu.stream),
                     comm);
  gpu.sync();
  checkOverlapped(comm, before, 1);
  const std::vector<char> want = referenceC(type, s, expectedGathered, b, gpu.cuda, false, rank, a);
  const std::vector<char> got = c.read();
  RANK_CHECK(memcmp(got.data(), want.data(), c.bytes) == 0, "type ", type, " shape ", s.mLocal, "x", s.k, "x", s.n,
             ": C differs from cuBLASLt block by block");
  RANK_CHECK(got.back() == static_cast<char>(0xee), "a byte past C was written");
  if (where == Gathered::kWorkspace) return;
  const std::vector<char> gatheredNow = gathered.read(), gatheredWant = expectedGathered.read();
  RANK_CHECK(memcmp(gatheredNow.data(), gatheredWant.data(), gathered.bytes) == 0, "the gathered A is wrong");
  RANK_CHECK(gatheredNow.back() == static_cast<char>(0xee), "a byte past the gathered A was written");
}

const slimecclDataType_t kTypes[] = {slimecclBfloat16, slimecclFloat16, slimecclFloat32, slimecclFloat64};
const Shape kShapes[] = {{1, 1, 1}, {5, 33, 17}, {3, 4, 0}, {0, 6, 6}, {4, 0, 8}, {64, 96, 80}, {256, 512, 384}};

class DeviceOverlap : public ::testing::TestWithParam<Launch> {};

TEST_P(DeviceOverlap, AllGatherGemmMatchesCublasBlockByBlock) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    uint64_t call = 0;
    for (slimecclDataType_t type : kTypes)
      for (const Shape& s : kShapes)
        for (Gathered where : {Gathered::kWorkspace, Gathered::kCallerBuffer, Gathered::kInPlace})
          gemmAndCheck(rank, comm, gpu, type, s, where, ++call);
  });
}

TEST_P(DeviceOverlap, LargeBlocksLandBeforeTheirGemm) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    for (uint64_t call = 1; call <= 3; ++call)
      gemmAndCheck(rank, comm, gpu, slimecclBfloat16, Shape{2048, 4096, 1024}, Gathered::kCallerBuffer, call);
  });
}

// SLIMECCL_GEMM_TF32=1: float GEMMs take TF32 tensor cores, as cuBLAS's FAST_TF32 compute gives
// them, and not the exact float products.
TEST_P(DeviceOverlap, Tf32IsTakenOnlyWhenAskedFor) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GEMM_TF32"] = "1";
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const Shape s{64, 256, 96};
        const size_t aBlock = s.mLocal * s.k * 4;
        MatrixBytes aLocal(aBlock), gathered(aBlock * kRanks), b(s.k * s.n * 4), c(kRanks * s.mLocal * s.n * 4);
        std::vector<std::vector<char>> blocks;
        for (int r = 0; r < kRanks; ++r) blocks.push_back(randomMatrix(slimecclFloat32, s.mLocal * s.k, 500 + r));
        aLocal.write(blocks[rank]);
        b.write(randomMatrix(slimecclFloat32, s.k * s.n, 501));
        RANK_CHECK_SUCCESS(slimecclAllGatherGemm(aLocal.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k,
                                                 slimecclFloat32, comm, gpu.stream),
                           comm);
        gpu.sync();
        const std::vector<char> got = c.read(), gatheredNow = gathered.read();
        for (int r = 0; r < kRanks; ++r)
          RANK_CHECK(memcmp(gatheredNow.data() + r * aBlock, blocks[r].data(), aBlock) == 0, "block ", r,
                     " of the gathered A is wrong");
        const std::vector<char> tf32 = referenceC(slimecclFloat32, s, gathered, b, gpu.cuda, true);
        const std::vector<char> exact = referenceC(slimecclFloat32, s, gathered, b, gpu.cuda, false);
        RANK_CHECK(memcmp(got.data(), tf32.data(), c.bytes) == 0, "C differs from cuBLAS with TF32");
        RANK_CHECK(memcmp(got.data(), exact.data(), c.bytes) != 0, "C equals the float products: TF32 was not taken");
      },
      options);
}

// SLIMECCL_GPU_DIRECT=0: the AllGather takes host staging and the blocks are handed after it, with
// the same C.
TEST_P(DeviceOverlap, OnHostStagingEveryBlockIsHandedAfterTheAllGather) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GPU_DIRECT"] = "0";
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const Shape s{32, 48, 40};
        const size_t aBlock = s.mLocal * s.k * 2;
        MatrixBytes aLocal(aBlock), gathered(aBlock * kRanks), b(s.k * s.n * 2), c(kRanks * s.mLocal * s.n * 2);
        MatrixBytes expectedGathered(aBlock * kRanks);
        std::vector<std::vector<char>> blocks;
        for (int r = 0; r < kRanks; ++r) blocks.push_back(randomMatrix(slimecclFloat16, s.mLocal * s.k, 600 + r));
        aLocal.write(blocks[rank]);
        for (int r = 0; r < kRanks; ++r) expectedGathered.write(blocks[r], r * aBlock);
        b.write(randomMatrix(slimecclFloat16, s.k * s.n, 601));
        const slimecclDevicePathInfo before = pathOf(comm);
        RANK_CHECK_SUCCESS(slimecclAllGatherGemm(aLocal.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k,
                                                 slimecclFloat16, comm, gpu.stream),
                           comm);
        gpu.sync();
        const slimecclDevicePathInfo now = pathOf(comm);
        RANK_CHECK(now.opsStaged - before.opsStaged == 1, "ops staged: ", now.opsStaged - before.opsStaged);
        RANK_CHECK(now.overlapAllGathers == before.overlapAllGathers, "an AllGather went GPU to GPU");
        const std::vector<char> want = referenceC(slimecclFloat16, s, expectedGathered, b, gpu.cuda), got = c.read();
        RANK_CHECK(memcmp(got.data(), want.data(), c.bytes) == 0, "C differs from cuBLAS block by block");
      },
      options);
}

struct Handed {
  cudaStream_t stream;
  char* copies;  // each block's bytes, copied on the stream when the block is handed
  size_t blockBytes;
  std::vector<int> order;
};

// Copies the block on the stream at the point where it was handed: it must hold its final bytes there.
void copyHandedBlock(int srcRank, void* chunk, size_t count, void* user) {
  auto* handed = static_cast<Handed*>(user);
  handed->order.push_back(srcRank);
  RANK_CHECK(count * sizeof(int32_t) == handed->blockBytes, "count ", count);
  CUDA_RANK_CHECK(cudaMemcpyAsync(handed->copies + srcRank * handed->blockBytes, chunk, handed->blockBytes,
                                  cudaMemcpyDeviceToDevice, handed->stream));
}

TEST_P(DeviceOverlap, AllGatherOverlapHandsEachBlockInLandingOrder) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const size_t count = size_t{4} << 20;  // 16 MiB per block: a copy queued too early would see the poison
    for (bool inPlace : {false, true}) {
      Ints send(count), recv(count * kRanks), copies(count * kRanks);
      send.write(valuesOf(rank, count, 0, inPlace));
      if (inPlace) recv.write(valuesOf(rank, count, 0, inPlace), rank * count);
      Handed handed{gpu.cuda, reinterpret_cast<char*>(copies.data), count * sizeof(int32_t), {}};
      const slimecclDevicePathInfo before = pathOf(comm);
      RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(inPlace ? recv.data + rank * count : send.data, recv.data, count,
                                                  slimecclInt32, copyHandedBlock, &handed, comm, gpu.stream),
                         comm);
      RANK_CHECK(handed.order.size() == static_cast<size_t>(kRanks), "blocks handed: ", handed.order.size());
      for (int k = 0; k < kRanks && k < static_cast<int>(handed.order.size()); ++k)
        RANK_CHECK(handed.order[k] == (rank - k + kRanks) % kRanks, "hand ", k, " was rank ", handed.order[k]);
      gpu.sync();
      checkOverlapped(comm, before, 1);
      const std::vector<int32_t> got = recv.read(), seen = copies.read();
      for (int r = 0; r < kRanks; ++r)
        for (size_t i = 0; i < count; i += 997) {
          RANK_CHECK(got[r * count + i] == valueOf(r, i, inPlace), "block ", r, " element ", i);
          RANK_CHECK(seen[r * count + i] == valueOf(r, i, inPlace), "block ", r, " element ", i,
                     " had not landed when it was handed");
        }
    }
  });
}

// Launches a captured AllGatherGemm `replays` times, each after writing new blocks of A into
// aLocal (and all ranks' blocks into expectedGathered), and checks C against cuBLAS each time.
void replayWithNewInputs(int rank, RankGpu& gpu, cudaGraphExec_t exec, slimecclDataType_t type, const Shape& s,
                         MatrixBytes& aLocal, MatrixBytes& expectedGathered, const MatrixBytes& b, const MatrixBytes& c,
                         int replays) {
  const size_t aBlock = s.mLocal * s.k * sizeOf(type);
  for (int replay = 1; replay <= replays; ++replay) {
    std::vector<std::vector<char>> blocks;
    for (int r = 0; r < kRanks; ++r) blocks.push_back(randomMatrix(type, s.mLocal * s.k, replay * 100 + r));
    aLocal.write(blocks[rank]);
    for (int r = 0; r < kRanks; ++r) expectedGathered.write(blocks[r], r * aBlock);
    CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
    gpu.sync();
    const std::vector<char> want = referenceC(type, s, expectedGathered, b, gpu.cuda), got = c.read();
    RANK_CHECK(memcmp(got.data(), want.data(), c.bytes) == 0, "replay ", replay, ": C differs");
  }
}

TEST_P(DeviceOverlap, CapturedAllGatherGemmReplaysWithNewInputs) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const Shape s{128, 256, 192};
    const slimecclDataType_t type = slimecclFloat32;
    const size_t aBlock = s.mLocal * s.k * 4;
    MatrixBytes aLocal(aBlock), gathered(aBlock * kRanks), b(s.k * s.n * 4), c(kRanks * s.mLocal * s.n * 4);
    MatrixBytes expectedGathered(aBlock * kRanks);
    b.write(randomMatrix(type, s.k * s.n, 7));
    // A first call outside the capture sets the path up.
    RANK_CHECK_SUCCESS(
        slimecclAllGatherGemm(aLocal.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k, type, comm, gpu.stream),
        comm);
    gpu.sync();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    const slimecclDevicePathInfo before = pathOf(comm);
    CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
    RANK_CHECK_SUCCESS(
        slimecclAllGatherGemm(aLocal.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k, type, comm, gpu.stream),
        comm);
    CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
    checkOverlapped(comm, before, 1);
    CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    replayWithNewInputs(rank, gpu, exec, type, s, aLocal, expectedGathered, b, c, 5);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  });
}

// The first call on the comm inside a capture, gathering into the library's workspace: the path,
// cuBLAS and the workspace are all made then, outside the captured stream.
TEST_P(DeviceOverlap, FirstCallInsideACaptureSetsEverythingUp) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const Shape s{96, 160, 64};
    const size_t aBlock = s.mLocal * s.k * 2;
    MatrixBytes aLocal(aBlock), b(s.k * s.n * 2), c(kRanks * s.mLocal * s.n * 2), expectedGathered(aBlock * kRanks);
    b.write(randomMatrix(slimecclBfloat16, s.k * s.n, 701));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
    RANK_CHECK_SUCCESS(slimecclAllGatherGemm(aLocal.data, nullptr, b.data, c.data, s.mLocal, s.n, s.k, slimecclBfloat16,
                                             comm, gpu.stream),
                       comm);
    CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
    CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    replayWithNewInputs(rank, gpu, exec, slimecclBfloat16, s, aLocal, expectedGathered, b, c, 3);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  });
}

// Rank 0 calls AllGatherOverlap while the others call a plain AllGather of the same size: the two
// set and clear the same flags, by copy engine and, for the small one, by the copy kernel.
TEST_P(DeviceOverlap, PeersMayRunAPlainAllGatherAgainstIt) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    for (size_t count : {size_t{1024}, size_t{4} << 20}) {
      Ints send(count), recv(count * kRanks);
      send.write(valuesOf(rank, count, 0, static_cast<int>(count % 7)));
      auto noop = [](int, void*, size_t, void*) {};
      if (rank == 0)
        RANK_CHECK_SUCCESS(
            slimecclAllGatherOverlap(send.data, recv.data, count, slimecclInt32, noop, nullptr, comm, gpu.stream),
            comm);
      else
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
      gpu.sync();
      const std::vector<int32_t> got = recv.read();
      for (int r = 0; r < kRanks; ++r)
        for (size_t i = 0; i < count; i += 331)
          RANK_CHECK(got[r * count + i] == valueOf(r, i, static_cast<int>(count % 7)), "count ", count, " block ", r,
                     " element ", i);
    }
  });
}

struct Reentry {
  slimecclComm_t comm = nullptr, other = nullptr;
  int rank = 0;
  slimecclResult_t same = slimecclSuccess, otherResult = slimecclInternalError;
  std::string sentence;
  std::vector<int32_t> sum;
};

// From the own block's callback: a call on the same comm is refused, one on another comm runs.
void callBackIntoSlimeccl(int srcRank, void*, size_t, void* user) {
  auto* r = static_cast<Reentry*>(user);
  if (srcRank != r->rank) return;
  std::vector<int32_t> send(4, r->rank + 1), recv(4 * kRanks, 0);
  r->same = slimecclAllGather(send.data(), recv.data(), 4, slimecclInt32, r->comm, nullptr);
  r->sentence = slimecclGetLastError(r->comm);
  r->sum.assign(4, 0);
  r->otherResult = slimecclAllReduce(send.data(), r->sum.data(), 4, slimecclInt32, slimecclSum, r->other, nullptr);
}

TEST_P(DeviceOverlap, ACallbackMayCallAnotherCommButNotItsOwn) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    slimecclComm_t other = nullptr;
    RANK_CHECK_SUCCESS(slimecclCommSplit(comm, 0, rank, &other, nullptr), comm);
    Ints send(256), recv(256 * kRanks);
    Reentry reentry;
    reentry.comm = comm;
    reentry.other = other;
    reentry.rank = rank;
    RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(send.data, recv.data, 256, slimecclInt32, callBackIntoSlimeccl,
                                                &reentry, comm, gpu.stream),
                       comm);
    gpu.sync();
    RANK_CHECK(reentry.same == slimecclInvalidUsage, "a call on the same comm from the callback returned ",
               reentry.same);
    RANK_CHECK(reentry.sentence.find("AllGatherOverlap callback") != std::string::npos, reentry.sentence);
    RANK_CHECK(reentry.otherResult == slimecclSuccess, "AllReduce on another comm from the callback returned ",
               reentry.otherResult);
    const int32_t want = kRanks * (kRanks + 1) / 2;
    for (int32_t v : reentry.sum) RANK_CHECK(v == want, "sum ", v, " instead of ", want);
    RANK_CHECK_SUCCESS(slimecclCommDestroy(other), nullptr);
  });
}

// Rank 1's stream reaches the op 3 s late; rank 0 aborts while its stream waits for rank 1's block.
TEST_P(DeviceOverlap, AbortReleasesAStreamWaitingForABlockWithinASecond) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.teardown = Teardown::kNone;
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const Shape s{512, 1024, 1024};
        MatrixBytes a(s.mLocal * s.k * 2), gathered(kRanks * s.mLocal * s.k * 2), b(s.k * s.n * 2),
            c(kRanks * s.mLocal * s.n * 2);
        // A first call sets the comm's path and cuBLAS up.
        RANK_CHECK_SUCCESS(slimecclAllGatherGemm(a.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k,
                                                 slimecclBfloat16, comm, gpu.stream),
                           comm);
        gpu.sync();
        if (rank == 1) reachTheNextOpLate(gpu);
        RANK_CHECK_SUCCESS(slimecclAllGatherGemm(a.data, gathered.data, b.data, c.data, s.mLocal, s.n, s.k,
                                                 slimecclBfloat16, comm, gpu.stream),
                           comm);
        endAbortTest(comm, gpu, rank, "rank 1's block");
      },
      options);
}

// The last rank killed with SIGKILL while AllGatherGemms run: each survivor's stream, waiting for a
// block that never lands, is let go with an error naming the dead rank.
TEST(DeviceOverlapFaults, PeerKilledDuringAllGatherGemms) {
  SKIP_WITHOUT_GPUS();
  runWithKilledPeer([](int rank, slimecclComm_t comm, slimecclStream_t stream, cudaStream_t) {
    const Shape s{4096, 8192, 4096};
    void *a, *gathered, *b, *c;
    cudaMalloc(&a, s.mLocal * s.k * 2);
    cudaMalloc(&gathered, kRanks * s.mLocal * s.k * 2);
    cudaMalloc(&b, s.k * s.n * 2);
    cudaMalloc(&c, kRanks * s.mLocal * s.n * 2);
    for (int i = 0; i < (rank == kRanks - 1 ? 1 : 20); ++i)
      if (slimecclAllGatherGemm(a, gathered, b, c, s.mLocal, s.n, s.k, slimecclBfloat16, comm, stream) !=
          slimecclSuccess) {
        if (rank == kRanks - 1) _exit(4);
        break;
      }
  });
}

TEST_P(DeviceOverlap, MisuseIsRefusedWithASentence) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    MatrixBytes a(64), gathered(64 * kRanks), b(64), c(64 * kRanks);
    std::vector<char> host(64 * kRanks);
    auto refused = [&](slimecclResult_t code, slimecclResult_t rc, const char* words) {
      RANK_CHECK(rc == code, "result ", rc, " for a call that should fail with ", code, " (", words, ")");
      const std::string sentence = lastErrorText(comm);
      RANK_CHECK(sentence.find(words) != std::string::npos, sentence);
      RANK_CHECK(sentence.find("rank " + std::to_string(rank)) != std::string::npos, sentence);
    };
    // 4 x 4 float matrices: 64 bytes.
    refused(slimecclInvalidUsage,
            slimecclAllGatherGemm(a.data, gathered.data, b.data, c.data, 4, 4, 4, slimecclFloat32, comm, nullptr),
            "slimecclStreamCreateFromCuda");
    refused(
        slimecclInvalidArgument,
        slimecclAllGatherGemm(a.data, gathered.data, host.data(), c.data, 4, 4, 4, slimecclFloat32, comm, gpu.stream),
        "b is host memory");
    refused(slimecclInvalidArgument,
            slimecclAllGatherGemm(a.data, gathered.data, b.data, c.data, 4, 4, 4, slimecclInt32, comm, gpu.stream),
            "has no GPU GEMM");
    refused(
        slimecclInvalidArgument,
        slimecclAllGatherGemm(a.data, gathered.data, b.data, gathered.data, 4, 4, 4, slimecclFloat32, comm, gpu.stream),
        "c overlaps aGathered");
    auto never = [](int, void*, size_t, void*) {};
    refused(slimecclInvalidUsage,
            slimecclAllGatherOverlap(a.data, gathered.data, 16, slimecclInt32, never, nullptr, comm, nullptr),
            "slimecclStreamCreateFromCuda");
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    refused(slimecclInvalidUsage,
            slimecclAllGatherOverlap(a.data, gathered.data, 16, slimecclInt32, never, nullptr, comm, gpu.stream),
            "inside slimecclGroupStart");
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, DeviceOverlap, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const auto& info) { return std::string(launchName(info.param)); });

}  // namespace
}  // namespace slimeccl_test
