// GemmReduceScatter and ReduceScatterOverlap on device buffers (docs/overlap.md): bfloat16,
// float16, float and double, odd shapes and empty K, sum, max and min; every rank's A and B hold
// integers in {-1, 0, 1} and K stays small enough that every product and sum is exact in each type,
// so C equals the integer reference bit for bit whatever the order of the sums. The Reduces must
// have run GPU to GPU beside the producer (slimecclDevicePathInfo::overlapReduces); a captured
// graph replayed with new inputs; a producer callback queuing its own copies; host staging; and the
// refusals. Runs SLIMECCL_TEST_GPUS ranks (default 2); skipped without that many GPUs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "device_matrices.h"
#include "gpu_ranks.h"
#include "harness.h"
#include "integer_products.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct Shape {
  size_t mLocal, k, n;
};

// Rank `rank`'s A (kRanks * mLocal x k) and B (k x n) of call `call`.
std::vector<long> matrixA(const Shape& s, uint64_t call, int rank) {
  return unitIntegers(kRanks * s.mLocal * s.k, call * 100 + rank);
}
std::vector<long> matrixB(const Shape& s, uint64_t call, int rank) {
  return unitIntegers(s.k * s.n, call * 100 + 50 + rank);
}

// Rank `rank`'s rows of op over ranks of (A_q x B_q).
std::vector<long> expectedC(const Shape& s, slimecclRedOp_t op, uint64_t call, int rank) {
  return reducedProductRows(
      ProductShape{s.mLocal, s.k, s.n}, rank, kRanks, op, [&](int q) { return matrixA(s, call, q); },
      [&](int q) { return matrixB(s, call, q); });
}

// The comm's Reduces beside a producer since `before` are `reduces`, all GPU to GPU.
void checkOverlapped(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long reduces) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
  RANK_CHECK(now.overlapReduces - before.overlapReduces == reduces,
             "Reduces beside the producer: ", now.overlapReduces - before.overlapReduces, " of ", reduces);
}

// One GemmReduceScatter of call `call`'s matrices, C checked against the integer reference. Returns
// the comm's path info from before the call, for the caller's route checks.
slimecclDevicePathInfo gemmAndCheck(int rank, slimecclComm_t comm, RankGpu& gpu, slimecclDataType_t type,
                                    slimecclRedOp_t op, const Shape& s, uint64_t call) {
  const size_t elem = sizeOf(type);
  MatrixBytes a(kRanks * s.mLocal * s.k * elem), b(s.k * s.n * elem), c(s.mLocal * s.n * elem);
  a.write(asBytes(type, matrixA(s, call, rank)));
  b.write(asBytes(type, matrixB(s, call, rank)));
  const slimecclDevicePathInfo before = pathOf(comm);
  RANK_CHECK_SUCCESS(slimecclGemmReduceScatter(a.data, b.data, c.data, s.mLocal, s.n, s.k, type, op, comm, gpu.stream),
                     comm);
  gpu.sync();
  const std::vector<char> want = asBytes(type, expectedC(s, op, call, rank)), got = c.read();
  RANK_CHECK(memcmp(got.data(), want.data(), want.size()) == 0, "type ", type, " op ", op, " shape ", s.mLocal, "x",
             s.k, "x", s.n, ": C differs from the integer reference");
  RANK_CHECK(got.back() == static_cast<char>(0xee), "a byte past C was written");
  return before;
}

const slimecclDataType_t kTypes[] = {slimecclBfloat16, slimecclFloat16, slimecclFloat32, slimecclFloat64};
// K at most 48: a partial product is at most 48 and a sum of 4 ranks' at most 192, below the
// 256 past which bfloat16 skips integers.
const Shape kShapes[] = {{1, 1, 1}, {5, 33, 17}, {3, 4, 0}, {0, 6, 6}, {4, 0, 8}, {64, 48, 80}, {256, 32, 384}};

class DeviceReduceScatterOverlap : public ::testing::TestWithParam<Launch> {};

TEST_P(DeviceReduceScatterOverlap, GemmReduceScatterIsExact) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    uint64_t call = 0;
    for (slimecclDataType_t type : kTypes)
      for (const Shape& s : kShapes)
        for (slimecclRedOp_t op : {slimecclSum, slimecclMax, slimecclMin})
          checkOverlapped(comm, gemmAndCheck(rank, comm, gpu, type, op, s, ++call), s.mLocal * s.n == 0 ? 0 : kRanks);
    // Large blocks (8 MiB each: one piece), GEMMs beside the Reduces; the integer reference on the
    // host keeps them this small.
    for (uint64_t more = 1; more <= 2; ++more)
      checkOverlapped(comm,
                      gemmAndCheck(rank, comm, gpu, slimecclFloat32, slimecclSum, Shape{1024, 128, 2048}, 1000 + more),
                      kRanks);
  });
}

// SLIMECCL_GEMM_RS_PIECE_BYTES of 1000: a block of 37 rows of 40 bfloat16s (2960 bytes) goes as 3
// pieces of 13, 13 and 11 rows, each reduced on its own.
TEST_P(DeviceReduceScatterOverlap, BlocksGoInPiecesOfRows) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GEMM_RS_PIECE_BYTES"] = "1000";
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        checkOverlapped(comm, gemmAndCheck(rank, comm, gpu, slimecclBfloat16, slimecclSum, Shape{37, 24, 40}, 11),
                        3 * kRanks);
      },
      options);
}

TEST_P(DeviceReduceScatterOverlap, CapturedGemmReduceScatterReplaysWithNewInputs) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const Shape s{128, 40, 96};
    const slimecclDataType_t type = slimecclBfloat16;
    MatrixBytes a(kRanks * s.mLocal * s.k * 2), b(s.k * s.n * 2), c(s.mLocal * s.n * 2);
    b.write(asBytes(type, matrixB(s, 7, rank)));
    // A first call outside the capture sets the side stream and cuBLASLt up.
    RANK_CHECK_SUCCESS(
        slimecclGemmReduceScatter(a.data, b.data, c.data, s.mLocal, s.n, s.k, type, slimecclSum, comm, gpu.stream),
        comm);
    gpu.sync();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    const slimecclDevicePathInfo before = pathOf(comm);
    CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
    RANK_CHECK_SUCCESS(
        slimecclGemmReduceScatter(a.data, b.data, c.data, s.mLocal, s.n, s.k, type, slimecclSum, comm, gpu.stream),
        comm);
    CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
    checkOverlapped(comm, before, kRanks);
    CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (uint64_t replay = 1; replay <= 4; ++replay) {
      // B stays as captured (call 7's); A is new each time.
      const uint64_t call = 7;
      a.write(asBytes(type, unitIntegers(kRanks * s.mLocal * s.k, 900 + replay * 10 + rank)));
      CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
      gpu.sync();
      const std::vector<long> want = reducedProductRows(
          ProductShape{s.mLocal, s.k, s.n}, rank, kRanks, slimecclSum,
          [&](int q) { return unitIntegers(kRanks * s.mLocal * s.k, 900 + replay * 10 + q); },
          [&](int q) { return matrixB(s, call, q); });
      const std::vector<char> wantBytes = asBytes(type, want), got = c.read();
      RANK_CHECK(memcmp(got.data(), wantBytes.data(), wantBytes.size()) == 0, "replay ", replay, ": C differs");
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  });
}

// ReduceScatterOverlap's producer on the calling thread, in block order, queuing its own copy of
// each block on the stream; the result is the ReduceScatter of what it queued.
struct CopyProducer {
  cudaStream_t stream;
  std::vector<std::vector<char>> blocks;  // host bytes of each block
  std::vector<int> order;
  std::thread::id thread;
  bool offThread = false;
  static void produce(int block, void* out, size_t count, void* user) {
    auto* self = static_cast<CopyProducer*>(user);
    self->order.push_back(block);
    if (std::this_thread::get_id() != self->thread) self->offThread = true;
    cudaMemcpyAsync(out, self->blocks[block].data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, self->stream);
  }
};

TEST_P(DeviceReduceScatterOverlap, ProducerCallbackQueuesEachBlockInOrder) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    const size_t count = 100003;
    Ints send(count * kRanks), recv(count);
    CopyProducer producer{gpu.cuda, {}, {}, std::this_thread::get_id()};
    for (int d = 0; d < kRanks; ++d) {
      std::vector<int32_t> values(count);
      for (size_t i = 0; i < count; ++i) values[i] = static_cast<int32_t>((rank + 1) * 1000 + d * 7 + i % 13);
      producer.blocks.emplace_back(reinterpret_cast<char*>(values.data()),
                                   reinterpret_cast<char*>(values.data() + count));
    }
    const slimecclDevicePathInfo before = pathOf(comm);
    RANK_CHECK_SUCCESS(slimecclReduceScatterOverlap(send.data, recv.data, count, slimecclInt32, slimecclSum,
                                                    CopyProducer::produce, &producer, comm, gpu.stream),
                       comm);
    RANK_CHECK(static_cast<int>(producer.order.size()) == kRanks, producer.order.size(), " produce calls");
    for (int d = 0; d < kRanks; ++d) RANK_CHECK(producer.order[d] == d, "call ", d, " for block ", producer.order[d]);
    RANK_CHECK(!producer.offThread, "produce ran off the calling thread");
    gpu.sync();
    checkOverlapped(comm, before, kRanks);
    const std::vector<int32_t> got = recv.read();
    for (size_t i = 0; i < count; ++i) {
      int32_t want = 0;
      for (int q = 0; q < kRanks; ++q) want += static_cast<int32_t>((q + 1) * 1000 + rank * 7 + i % 13);
      if (got[i] != want) RANK_CHECK(false, "element ", i, " is ", got[i], " instead of ", want);
    }
  });
}

// SLIMECCL_GPU_DIRECT=0: the Reduces take host staging, one after another, with the same C.
TEST_P(DeviceReduceScatterOverlap, OnHostStagingTheResultIsTheSame) {
  SKIP_WITHOUT_GPUS();
  RunOptions options;
  options.env["SLIMECCL_GPU_DIRECT"] = "0";
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const slimecclDevicePathInfo before =
            gemmAndCheck(rank, comm, gpu, slimecclFloat16, slimecclSum, Shape{32, 24, 40}, 3);
        const slimecclDevicePathInfo now = pathOf(comm);
        RANK_CHECK(now.opsStaged - before.opsStaged == static_cast<unsigned long long>(kRanks),
                   "ops staged: ", now.opsStaged - before.opsStaged);
        RANK_CHECK(now.overlapReduces == before.overlapReduces, "a Reduce went GPU to GPU");
      },
      options);
}

TEST_P(DeviceReduceScatterOverlap, MisuseIsRefusedWithASentence) {
  SKIP_WITHOUT_GPUS();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    MatrixBytes a(64 * kRanks), b(64), c(64);
    std::vector<char> host(64);
    auto refused = [&](slimecclResult_t code, slimecclResult_t rc, const char* words) {
      RANK_CHECK(rc == code, "result ", rc, " for a call that should fail with ", code, " (", words, ")");
      const std::string sentence = lastErrorText(comm);
      RANK_CHECK(sentence.find(words) != std::string::npos, sentence);
      RANK_CHECK(sentence.find("rank " + std::to_string(rank)) != std::string::npos, sentence);
    };
    // 4 x 4 float blocks: 64 bytes.
    refused(slimecclInvalidUsage,
            slimecclGemmReduceScatter(a.data, b.data, c.data, 4, 4, 4, slimecclFloat32, slimecclSum, comm, nullptr),
            "slimecclStreamCreateFromCuda");
    refused(
        slimecclInvalidArgument,
        slimecclGemmReduceScatter(a.data, host.data(), c.data, 4, 4, 4, slimecclFloat32, slimecclSum, comm, gpu.stream),
        "b is host memory");
    refused(slimecclInvalidArgument,
            slimecclGemmReduceScatter(a.data, b.data, c.data, 4, 4, 4, slimecclInt32, slimecclSum, comm, gpu.stream),
            "has no GPU GEMM");
    refused(slimecclInvalidArgument,
            slimecclGemmReduceScatter(a.data, b.data, a.data, 4, 4, 4, slimecclFloat32, slimecclSum, comm, gpu.stream),
            "c overlaps a");
    auto never = [](int, void*, size_t, void*) {};
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    refused(
        slimecclInvalidUsage,
        slimecclReduceScatterOverlap(a.data, c.data, 16, slimecclInt32, slimecclSum, never, nullptr, comm, gpu.stream),
        "inside slimecclGroupStart");
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, DeviceReduceScatterOverlap, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const auto& info) { return std::string(launchName(info.param)); });

}  // namespace
}  // namespace slimeccl_test
