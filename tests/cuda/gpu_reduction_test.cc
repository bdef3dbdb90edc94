// GPU reductions (docs/cuda.md, docs/algorithms.md): AllReduce, ReduceScatter and Reduce on device
// buffers, reduced by kernels that read the peers' buffers. Every datatype and op against exact
// expected values, in and out of place, counts that are not a multiple of the 16-byte word; each
// algorithm forced over sizes; the tuner's choice; the narrow floats' rounding (in rank order, or
// in the ring's order for the ring); the config's bound on blocks; captured graphs replayed, with
// each algorithm. Each test checks, through slimecclCommGetDevicePathInfo and the op's route, that
// the ops went GPU to GPU by the algorithm claimed. Runs SLIMECCL_TEST_GPUS ranks (default 2; the
// ring's steps wait for each other from 3). Small reductions take no flagged lines here (linesOff):
// line_ops_test.cc tests those.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "buffers.h"
#include "device_values.h"
#include "gpu_ranks.h"
#include "harness.h"
#include "premul_sum_values.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {
namespace {

enum class Reduction { kAllReduce, kReduceScatter, kReduce };
const Reduction kReductions[] = {Reduction::kAllReduce, Reduction::kReduceScatter, Reduction::kReduce};
const char* nameOf(Reduction r) {
  return r == Reduction::kAllReduce ? "AllReduce" : r == Reduction::kReduceScatter ? "ReduceScatter" : "Reduce";
}

// One reduction of `count` elements (the call's count argument) on `gpu`'s stream, its input
// written from `values` first; checks the output bit for bit after the stream is done. In place,
// the input and output share `recv`'s allocation as NCCL's in-place forms do.
void reduceAndCheck(int rank, slimecclComm_t comm, RankGpu& gpu, Reduction what, size_t count, slimecclDataType_t type,
                    slimecclRedOp_t op, bool inPlace, const ReductionValues& values, DeviceBytes& send,
                    DeviceBytes& recv) {
  const size_t elem = datatypeSize(type), root = count % kRanks;
  const size_t inputs = what == Reduction::kReduceScatter ? count * kRanks : count;
  std::vector<char> input(inputs * elem);
  values.fillInputs(input.data(), rank, 0, inputs);
  DeviceBytes& source = inPlace ? recv : send;
  source.write(input);
  char* out = inPlace && what == Reduction::kReduceScatter ? recv.data + rank * count * elem : recv.data;
  switch (what) {
    case Reduction::kAllReduce:
      RANK_CHECK_SUCCESS(slimecclAllReduce(source.data, out, count, type, op, comm, gpu.stream), comm);
      break;
    case Reduction::kReduceScatter:
      RANK_CHECK_SUCCESS(slimecclReduceScatter(source.data, out, count, type, op, comm, gpu.stream), comm);
      break;
    case Reduction::kReduce:
      RANK_CHECK_SUCCESS(slimecclReduce(source.data, out, count, type, op, static_cast<int>(root), comm, gpu.stream),
                         comm);
      break;
  }
  gpu.sync();
  if (what == Reduction::kReduce && static_cast<size_t>(rank) != root) return;
  const size_t first = what == Reduction::kReduceScatter ? rank * count : 0;
  const std::vector<char> got = recv.read(out - recv.data, count * elem);
  const std::string mismatch = values.resultMismatch(got.data(), first, count);
  RANK_CHECK(mismatch.empty(), nameOf(what), " type ", type, " op ", opName(op), " count ", count, " in place ",
             inPlace, ": ", mismatch);
}

// How many reductions each algorithm ran.
struct AlgoCounts {
  unsigned long long oneShot = 0, twoShot = 0, twoShotSm = 0, ring = 0, direct = 0;
};
AlgoCounts countsOf(const slimecclDevicePathInfo& info) {
  return {info.reductionsOneShot, info.reductionsTwoShot, info.reductionsTwoShotSm, info.reductionsRing,
          info.reductionsDirect};
}
// `n` reductions by the algorithm SLIMECCL_GPU_REDUCE_ALGO names `algo`.
AlgoCounts countsBy(const std::string& algo, unsigned long long n) {
  AlgoCounts c;
  (algo == "oneshot"      ? c.oneShot
   : algo == "twoshot"    ? c.twoShot
   : algo == "twoshot_sm" ? c.twoShotSm
   : algo == "ring"       ? c.ring
                          : c.direct) = n;
  return c;
}

// Every reduction since `before` went GPU to GPU, `ops` of them, by the algorithms counted.
void checkReducedOnGpu(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long ops,
                       const AlgoCounts& want) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.gpuToGpu == 1, "the comm has no GPU-to-GPU path");
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
  RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == ops, "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu,
             " of ", ops);
  const AlgoCounts a = countsOf(before), b = countsOf(now);
  RANK_CHECK(b.oneShot - a.oneShot == want.oneShot, "one-shot: ", b.oneShot - a.oneShot, " of ", want.oneShot);
  RANK_CHECK(b.twoShot - a.twoShot == want.twoShot, "two-shot: ", b.twoShot - a.twoShot, " of ", want.twoShot);
  RANK_CHECK(b.twoShotSm - a.twoShotSm == want.twoShotSm, "two-shot-sm: ", b.twoShotSm - a.twoShotSm, " of ",
             want.twoShotSm);
  RANK_CHECK(b.ring - a.ring == want.ring, "ring: ", b.ring - a.ring, " of ", want.ring);
  RANK_CHECK(b.direct - a.direct == want.direct, "direct: ", b.direct - a.direct, " of ", want.direct);
}

// The comm's last op was a GPU-to-GPU reduction by `algo`, as its route says.
void checkRouteAlgorithm(slimecclComm_t comm, const char* algo) {
  slimecclOpRoute route;
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(route.route == slimecclRouteGpuToGpu && strcmp(route.algorithm, algo) == 0, "route ", route.route,
             " algorithm '", route.algorithm, "', want '", algo, "'");
}

const slimecclDataType_t kTypes[] = {slimecclInt8,    slimecclUint8,   slimecclInt32,   slimecclUint32,
                                     slimecclInt64,   slimecclUint64,  slimecclFloat16, slimecclFloat32,
                                     slimecclFloat64, slimecclBfloat16};

class GpuReduction : public ::testing::TestWithParam<Launch> {};

// 1031 elements: neither a multiple of any type's 16-byte word nor of the rank count, so two-shot's
// chunks and the element-by-element tail are both taken.
TEST_P(GpuReduction, EveryTypeAndOpInAndOutOfPlace) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 1031;
        DeviceBytes send(count * kRanks * 8), recv(count * kRanks * 8);
        unsigned long long ops = 0;
        const slimecclDevicePathInfo before = pathOf(comm);
        for (Reduction what : kReductions)
          for (slimecclDataType_t type : kTypes)
            for (slimecclRedOp_t op : kAllOps)
              for (bool inPlace : {false, true}) {
                const ReductionValues values(type, op, kRanks, 17 * type + 3 * op + (inPlace ? 1 : 0));
                reduceAndCheck(rank, comm, gpu, what, count, type, op, inPlace, values, send, recv);
                ++ops;
              }
        const slimecclDevicePathInfo now = pathOf(comm);
        RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == ops && now.opsStaged == before.opsStaged, "GPU to GPU ",
                   now.opsGpuToGpu - before.opsGpuToGpu, " of ", ops, ", staged ", now.opsStaged - before.opsStaged);
      },
      linesOff());
}

// Runs with SLIMECCL_GPU_REDUCE_ALGO set to `algo` ("": unset, the tuner's choice).
RunOptions forcing(const std::string& algo) {
  RunOptions options;
  if (!algo.empty()) options.env["SLIMECCL_GPU_REDUCE_ALGO"] = algo;
  return options;
}

// Whether the algorithm SLIMECCL_GPU_REDUCE_ALGO names serves the reduction (docs/algorithms.md).
bool serves(const std::string& algo, Reduction what, bool inPlace) {
  switch (what) {
    case Reduction::kAllReduce: return algo != "direct" && !(algo == "oneshot" && inPlace);
    case Reduction::kReduce: return algo == "oneshot" || algo == "twoshot_sm" || (algo == "ring" && !inPlace);
    case Reduction::kReduceScatter: return algo == "direct" || algo == "ring";
  }
  return false;
}

// Each algorithm forced (SLIMECCL_GPU_REDUCE_ALGO) over sizes from one element to 16 MiB (a
// ReduceScatter's block), in and out of place, for each reduction it serves; each op's route and
// the comm's counters name the algorithm.
void everySizeBy(Launch launch, const char* algo) {
  const std::string name = algo;
  runRanks(
      launch, kRanks,
      [&name](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t largest = (4 << 20) + 5;
        DeviceBytes send(largest * 4 * kRanks), recv(largest * 4 * kRanks);
        for (size_t count : {size_t{1}, size_t{7}, size_t{4099}, size_t{(1 << 18) + 3}, largest})
          for (bool inPlace : {false, true})
            for (Reduction what : kReductions) {
              if (!serves(name, what, inPlace)) continue;
              const ReductionValues values(slimecclFloat32, slimecclSum, kRanks, count);
              const slimecclDevicePathInfo before = pathOf(comm);
              reduceAndCheck(rank, comm, gpu, what, count, slimecclFloat32, slimecclSum, inPlace, values, send, recv);
              checkReducedOnGpu(comm, before, 1, countsBy(name, 1));
              checkRouteAlgorithm(comm, name.c_str());
            }
      },
      linesOff(forcing(name)));
}

TEST_P(GpuReduction, EachAlgorithmForcedAcrossSizesInAndOutOfPlace) {
  SKIP_WITHOUT_GPUS();
  for (const char* algo : {"oneshot", "twoshot", "twoshot_sm", "ring", "direct"}) everySizeBy(GetParam(), algo);
}

// Left to the tuner: one-shot for a small AllReduce out of place, two-shot-sm in place and for a
// large one, two-shot (the all-gather half on copy engines) from 256 MiB on 2 GPUs, direct for
// ReduceScatter; the route names each.
TEST_P(GpuReduction, TheTunerChoosesBySizeAndPlace) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t small = 4096, large = 16 << 20, huge = 64 << 20;
        DeviceBytes send(huge * 4), recv(huge * 4);
        const ReductionValues values(slimecclFloat32, slimecclSum, kRanks, 5);
        slimecclDevicePathInfo before = pathOf(comm);
        reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, small, slimecclFloat32, slimecclSum, false, values, send,
                       recv);
        checkReducedOnGpu(comm, before, 1, countsBy("oneshot", 1));
        checkRouteAlgorithm(comm, "oneshot");
        before = pathOf(comm);
        reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, small, slimecclFloat32, slimecclSum, true, values, send,
                       recv);
        reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, large, slimecclFloat32, slimecclSum, false, values, send,
                       recv);
        checkReducedOnGpu(comm, before, 2, countsBy("twoshot_sm", 2));
        checkRouteAlgorithm(comm, "twoshot_sm");
        const char* hugeBy = kRanks == 2 ? "twoshot" : "twoshot_sm";
        before = pathOf(comm);
        reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, huge, slimecclFloat32, slimecclSum, false, values, send,
                       recv);
        checkReducedOnGpu(comm, before, 1, countsBy(hugeBy, 1));
        checkRouteAlgorithm(comm, hugeBy);
        before = pathOf(comm);
        reduceAndCheck(rank, comm, gpu, Reduction::kReduceScatter, small, slimecclFloat32, slimecclSum, false, values,
                       send, recv);
        checkReducedOnGpu(comm, before, 1, countsBy("direct", 1));
        checkRouteAlgorithm(comm, "direct");
      },
      linesOff());
}

// Ranks may differ in place: rank 0's AllReduce is in place and the others' are not. One-shot
// cannot serve rank 0, so every rank takes two-shot, whatever its own call's form.
TEST_P(GpuReduction, RanksThatDifferInPlaceAllTakeTwoShot) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        DeviceBytes send((1 << 20) * 4), recv((1 << 20) * 4);
        for (size_t count : {size_t{4096}, size_t{1 << 20}}) {
          const ReductionValues values(slimecclFloat32, slimecclSum, kRanks, count + 1);
          const slimecclDevicePathInfo before = pathOf(comm);
          reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, count, slimecclFloat32, slimecclSum, rank == 0, values,
                         send, recv);
          checkReducedOnGpu(comm, before, 1, countsBy("twoshot_sm", 1));
        }
      },
      linesOff());
}

// The rank whose input comes k-th into element i's sum: rank order, except in the ring, which
// reduces chunk c (the vector cut in kRanks chunks of whole 16-byte words) from rank c + 1 on round
// to rank c.
int rankInOrder(const std::string& algo, size_t i, int k, size_t count, size_t elem) {
  if (algo != "ring") return k;
  const size_t perWord = 16 / elem;
  const size_t chunk = ((count + perWord - 1) / perWord + kRanks - 1) / kRanks * perWord;
  return static_cast<int>((i / chunk + 1 + k) % kRanks);
}

// Inputs whose sums round: half and bfloat16 reduce in rank order (the ring: in its order), each
// step computed in float and rounded to the type (nearest even); float sums alike. A PreMulSum with
// a scalar that is not an integer rounds its product before the sum, as the host does (no fused
// multiply-add), and the ring multiplies each input once, not the partial results.
TEST_P(GpuReduction, NarrowFloatsRoundAfterEveryStepInRankOrder) {
  SKIP_WITHOUT_GPUS();
  for (const std::string algo : {"oneshot", "twoshot", "twoshot_sm", "ring"}) {
    runRanks(
        GetParam(), kRanks,
        [&algo](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank);
          const size_t count = 10007;
          auto input = [](int r, size_t i) {
            std::mt19937 gen(static_cast<unsigned>(r * 1000003 + i));
            return std::uniform_real_distribution<float>(-100.0f, 100.0f)(gen);
          };
          auto scalarOf = [](int r) { return 0.37f * static_cast<float>(r + 1); };
          for (slimecclDataType_t type : {slimecclFloat16, slimecclBfloat16, slimecclFloat32})
            for (bool premul : {false, true}) {
              const size_t elem = datatypeSize(type);
              auto toBits = [&](float v, char* out) {
                if (type == slimecclFloat16) {
                  const __half h = __float2half_rn(v);
                  memcpy(out, &h, 2);
                } else if (type == slimecclBfloat16) {
                  const __nv_bfloat16 b = __float2bfloat16_rn(v);
                  memcpy(out, &b, 2);
                } else
                  memcpy(out, &v, 4);
              };
              auto fromBits = [&](const char* in) {
                if (type == slimecclFloat16) {
                  __half h;
                  memcpy(&h, in, 2);
                  return __half2float(h);
                }
                if (type == slimecclBfloat16) {
                  __nv_bfloat16 b;
                  memcpy(&b, in, 2);
                  return __bfloat162float(b);
                }
                float f;
                memcpy(&f, in, 4);
                return f;
              };
              // Rank r's input as the type holds it, times its scalar where premul (rounded to the type).
              auto term = [&](int r, size_t i, char* out) {
                toBits(input(r, i), out);
                if (!premul) return;
                char scalar[4];
                toBits(scalarOf(r), scalar);
                toBits(fromBits(scalar) * fromBits(out), out);
              };
              std::vector<char> mine(count * elem), want(count * elem);
              for (size_t i = 0; i < count; ++i) {
                toBits(input(rank, i), mine.data() + i * elem);
                char step[4];
                term(rankInOrder(algo, i, 0, count, elem), i, step);
                for (int k = 1; k < kRanks; ++k) {
                  char next[4];
                  term(rankInOrder(algo, i, k, count, elem), i, next);
                  toBits(fromBits(step) + fromBits(next), step);
                }
                memcpy(want.data() + i * elem, step, elem);
              }
              DeviceBytes send(count * elem), recv(count * elem);
              send.write(mine);
              slimecclRedOp_t op = slimecclSum;
              char scalar[4];
              toBits(scalarOf(rank), scalar);
              if (premul)
                RANK_CHECK_SUCCESS(slimecclRedOpCreatePreMulSum(&op, scalar, type, slimecclScalarHostImmediate, comm),
                                   comm);
              const slimecclDevicePathInfo before = pathOf(comm);
              RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, type, op, comm, gpu.stream), comm);
              gpu.sync();
              checkReducedOnGpu(comm, before, 1, countsBy(algo, 1));
              checkRouteAlgorithm(comm, algo.c_str());
              if (premul) RANK_CHECK_SUCCESS(slimecclRedOpDestroy(op, comm), comm);
              const std::vector<char> got = recv.read(0, count * elem);
              for (size_t i = 0; i < count; ++i)
                RANK_CHECK(memcmp(got.data() + i * elem, want.data() + i * elem, elem) == 0, "type ", type, " premul ",
                           premul, " element ", i, ": got ", fromBits(got.data() + i * elem), ", want ",
                           fromBits(want.data() + i * elem));
            }
        },
        linesOff(forcing(algo)));
  }
}

// The config's maxCTAs bounds the blocks of every kernel of the comm; without it a large reduction
// takes the tuner's count.
TEST_P(GpuReduction, ConfigMaxCtasBoundsTheKernels) {
  SKIP_WITHOUT_GPUS();
  for (int maxCtas : {1, 3, 0}) {
    RunOptions options;
    if (maxCtas != 0) {
      slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
      config.maxCTAs = maxCtas;
      options.config = config;
    }
    runRanks(
        GetParam(), kRanks,
        [maxCtas](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank);
          const size_t count = 8 << 20;
          const size_t gatheredCount = 1 << 18;  // 1 MiB a rank: the copy kernel has 16 chunks of each
          DeviceBytes send(count * 4), recv(count * 4), gathered(gatheredCount * 4 * kRanks);
          const ReductionValues values(slimecclFloat32, slimecclSum, kRanks, 9);
          reduceAndCheck(rank, comm, gpu, Reduction::kAllReduce, count, slimecclFloat32, slimecclSum, false, values,
                         send, recv);
          const int reductionGrid = pathOf(comm).largestGrid;
          RANK_CHECK_SUCCESS(
              slimecclAllGather(send.data, gathered.data, gatheredCount, slimecclFloat32, comm, gpu.stream), comm);
          gpu.sync();
          const slimecclDevicePathInfo info = pathOf(comm);
          RANK_CHECK(info.opsBySms == 1, "the AllGather went by the copy kernel: ", info.opsBySms);
          const int grid = info.largestGrid;
          // Unbounded, a 32 MiB AllReduce takes the tuner's blocks (algorithms/gpu_tuning.h): 64 on two
          // GPUs, 16 on more.
          const int tuned = kRanks <= 2 ? 64 : 16;
          RANK_CHECK(reductionGrid == (maxCtas != 0 ? maxCtas : tuned), "reduction grid ", reductionGrid);
          if (maxCtas != 0)
            RANK_CHECK(grid == maxCtas, "largest grid ", grid, " with maxCTAs ", maxCtas);
          else
            RANK_CHECK(grid > 3, "largest grid ", grid, " by default");
        },
        linesOff(options));
  }
}

// A captured AllReduce, ReduceScatter and Reduce replayed 300 times with new inputs each time.
TEST_P(GpuReduction, CapturedGraphReplays) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 16001;
        Ints send(count * kRanks), all(count), scattered(count), reduced(count);
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, all.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        RANK_CHECK_SUCCESS(
            slimecclReduceScatter(send.data, scattered.data, count, slimecclInt32, slimecclMax, comm, gpu.stream),
            comm);
        RANK_CHECK_SUCCESS(
            slimecclReduce(send.data, reduced.data, count, slimecclInt32, slimecclMin, kRanks - 1, comm, gpu.stream),
            comm);
        CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
        CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        AlgoCounts captured;
        captured.oneShot = 2;
        captured.direct = 1;
        checkReducedOnGpu(comm, slimecclDevicePathInfo{}, 3, captured);
        for (int replay = 0; replay < 300; ++replay) {
          const std::vector<int32_t> input = valuesOf(rank, count * kRanks, 0, replay);
          CUDA_RANK_CHECK(cudaMemcpyAsync(send.data, input.data(), input.size() * sizeof(int32_t),
                                          cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
          if (replay % 61 != 0 && replay != 299) continue;
          gpu.sync();
          const std::vector<int32_t> a = all.read(), s = scattered.read(), m = reduced.read();
          for (size_t i = 0; i < count; ++i) {
            int32_t sum = 0, max = INT32_MIN, min = INT32_MAX;
            for (int r = 0; r < kRanks; ++r) {
              sum += valueOf(r, i, replay);
              max = std::max(max, valueOf(r, rank * count + i, replay));
              min = std::min(min, valueOf(r, i, replay));
            }
            RANK_CHECK(a[i] == sum, "replay ", replay, " AllReduce element ", i);
            RANK_CHECK(s[i] == max, "replay ", replay, " ReduceScatter element ", i);
            if (rank == kRanks - 1) RANK_CHECK(m[i] == min, "replay ", replay, " Reduce element ", i);
          }
        }
        gpu.sync();
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      },
      linesOff());
}

// Every datatype and op of AllReduce (in and out of place, as the tuner picks one-shot or two-shot
// for each, then forced to two-shot and to the ring) and ReduceScatter (direct, or the ring where
// forced), captured into one graph and replayed with new inputs each time.
TEST_P(GpuReduction, EveryTypeAndOpInsideACapturedGraph) {
  SKIP_WITHOUT_GPUS();
  // "": the tuner's choices; else every reduction the algorithm serves forced to it.
  for (const std::string algo : {"", "twoshot", "ring"}) {
    runRanks(
        GetParam(), kRanks,
        [&algo](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank);
          const size_t count = 1031;
          struct Captured {
            slimecclDataType_t type;
            slimecclRedOp_t op;
            bool inPlace;
            std::unique_ptr<DeviceBytes> send, recv, scattered;
          };
          std::vector<Captured> calls;
          for (slimecclDataType_t type : kTypes)
            for (slimecclRedOp_t op : kAllOps)
              for (bool inPlace : {false, true})
                calls.push_back({type, op, inPlace, std::make_unique<DeviceBytes>(count * kRanks * 8),
                                 std::make_unique<DeviceBytes>(count * kRanks * 8),
                                 std::make_unique<DeviceBytes>(count * 8)});
          cudaGraph_t graph = nullptr;
          cudaGraphExec_t exec = nullptr;
          CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
          for (Captured& c : calls) {
            DeviceBytes& source = c.inPlace ? *c.recv : *c.send;
            RANK_CHECK_SUCCESS(slimecclAllReduce(source.data, c.recv->data, count, c.type, c.op, comm, gpu.stream),
                               comm);
            RANK_CHECK_SUCCESS(
                slimecclReduceScatter(c.send->data, c.scattered->data, count, c.type, c.op, comm, gpu.stream), comm);
          }
          CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
          CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
          const slimecclDevicePathInfo captured = pathOf(comm);
          RANK_CHECK(captured.opsGpuToGpu == 2 * calls.size() && captured.opsStaged == 0, "captured GPU to GPU ",
                     captured.opsGpuToGpu, " of ", 2 * calls.size());
          // The ring serves the ReduceScatters too.
          if (!algo.empty())
            RANK_CHECK((algo == "ring" ? captured.reductionsRing : captured.reductionsTwoShot) ==
                           (algo == "ring" ? 2 : 1) * calls.size(),
                       "the reductions ", algo, " serves went by it");
          for (int replay = 0; replay < 3; ++replay) {
            for (Captured& c : calls) {
              const size_t elem = datatypeSize(c.type);
              const ReductionValues values(c.type, c.op, kRanks, replay * 1000 + 17 * c.type + 3 * c.op);
              std::vector<char> input(count * kRanks * elem);
              values.fillInputs(input.data(), rank, 0, count * kRanks);
              c.send->write(input);
              c.recv->write(std::vector<char>(input.begin(), input.begin() + count * elem));
            }
            CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
            gpu.sync();
            for (Captured& c : calls) {
              const size_t elem = datatypeSize(c.type);
              const ReductionValues values(c.type, c.op, kRanks, replay * 1000 + 17 * c.type + 3 * c.op);
              const std::vector<char> all = c.recv->read(0, count * elem), part = c.scattered->read(0, count * elem);
              const std::string allWrong = values.resultMismatch(all.data(), 0, count);
              const std::string partWrong = values.resultMismatch(part.data(), rank * count, count);
              RANK_CHECK(allWrong.empty() && partWrong.empty(), "replay ", replay, " type ", c.type, " op ",
                         opName(c.op), " in place ", c.inPlace, ": ", allWrong, partWrong);
            }
          }
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
        },
        linesOff(forcing(algo)));
  }
}

// PreMulSum GPU to GPU: each rank's input times its own scalar, summed, with the scalar given at
// once (host) or read from device memory by each op when it runs, so a new value written there
// between calls, or between replays of a captured graph, takes effect without a new operator.
TEST_P(GpuReduction, PreMulSumWithHostAndDeviceScalars) {
  SKIP_WITHOUT_GPUS();
  // "": the tuner's choices; else every reduction the algorithm serves forced to it.
  for (const std::string algo : {"", "twoshot", "ring"}) {
    runRanks(
        GetParam(), kRanks,
        [&algo](int rank, slimecclComm_t comm) {
          RankGpu gpu(rank);
          const size_t small = 3001, large = (1 << 20) + 3;
          DeviceBytes send(large * kRanks * 4), recv(large * kRanks * 4), scalarOnGpu(4);
          writePreMulInputs(rank, send, large * kRanks);
          auto expect = [&](const char* what, size_t count, size_t first, int round) {
            expectPreMulSum(recv, what, count, first, round);
          };
          float hostScalar;
          slimecclRedOp_t immediate, onDevice;
          makePreMulSumOps(rank, comm, &hostScalar, scalarOnGpu.data, &immediate, &onDevice);
          const slimecclDevicePathInfo before = pathOf(comm);
          for (size_t count : {small, large}) {
            RANK_CHECK_SUCCESS(
                slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream), comm);
            gpu.sync();
            expect("AllReduce, host scalar", count, 0, 0);
            for (int round : {1, 2}) {
              const float value = preMulScalar(rank, round);
              CUDA_RANK_CHECK(cudaMemcpyAsync(scalarOnGpu.data, &value, 4, cudaMemcpyHostToDevice, gpu.cuda));
              RANK_CHECK_SUCCESS(
                  slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, onDevice, comm, gpu.stream), comm);
              gpu.sync();
              expect("AllReduce, device scalar", count, 0, round);
            }
            RANK_CHECK_SUCCESS(
                slimecclReduceScatter(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream), comm);
            gpu.sync();
            expect("ReduceScatter, host scalar", count, rank * count, 0);
            RANK_CHECK_SUCCESS(
                slimecclReduce(send.data, recv.data, count, slimecclFloat32, immediate, 0, comm, gpu.stream), comm);
            gpu.sync();
            if (rank == 0) expect("Reduce, host scalar", count, 0, 0);
          }
          const slimecclDevicePathInfo after = pathOf(comm);
          RANK_CHECK(after.opsGpuToGpu - before.opsGpuToGpu == 10 && after.opsStaged == before.opsStaged, "GPU to GPU ",
                     after.opsGpuToGpu - before.opsGpuToGpu, " of 10, staged ", after.opsStaged - before.opsStaged);
          const AlgoCounts was = countsOf(before), is = countsOf(after);
          if (algo.empty())
            RANK_CHECK(is.twoShotSm > was.twoShotSm && is.oneShot > was.oneShot, "both one-shot and two-shot-sm ran");
          else
            // Six AllReduces; the ring serves the two ReduceScatters and two Reduces (out of place) too.
            RANK_CHECK((algo == "ring" ? is.ring - was.ring : is.twoShot - was.twoShot) == (algo == "ring" ? 10u : 6u),
                       "the reductions ", algo, " serves went by it");
          // Captured with the device scalar: each replay reads the value written before it.
          cudaGraph_t graph = nullptr;
          cudaGraphExec_t exec = nullptr;
          CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
          RANK_CHECK_SUCCESS(
              slimecclAllReduce(send.data, recv.data, small, slimecclFloat32, onDevice, comm, gpu.stream), comm);
          CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
          CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
          for (int round : {3, 4, 5}) {
            const float value = preMulScalar(rank, round);
            CUDA_RANK_CHECK(cudaMemcpyAsync(scalarOnGpu.data, &value, 4, cudaMemcpyHostToDevice, gpu.cuda));
            CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
            gpu.sync();
            expect("captured AllReduce, device scalar", small, 0, round);
          }
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
          RANK_CHECK_SUCCESS(slimecclRedOpDestroy(immediate, comm), comm);
          RANK_CHECK_SUCCESS(slimecclRedOpDestroy(onDevice, comm), comm);
        },
        linesOff(forcing(algo)));
  }
}

// On host staging (device buffers, the NULL stream) a device scalar is read when the op runs too.
TEST_P(GpuReduction, PreMulSumOnHostStagingReadsADeviceScalar) {
  SKIP_WITHOUT_GPUS();
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 4099;
        std::vector<float> input(count);
        for (size_t i = 0; i < count; ++i) input[i] = static_cast<float>((i + rank) % 7);
        DeviceBytes send(count * 4), recv(count * 4), scalar(4);
        send.write(std::vector<char>(reinterpret_cast<const char*>(input.data()),
                                     reinterpret_cast<const char*>(input.data()) + count * 4));
        slimecclRedOp_t op;
        RANK_CHECK_SUCCESS(slimecclRedOpCreatePreMulSum(&op, scalar.data, slimecclFloat32, slimecclScalarDevice, comm),
                           comm);
        for (int round : {1, 2}) {
          const float value = static_cast<float>((rank + 1) * round);
          CUDA_RANK_CHECK(cudaMemcpy(scalar.data, &value, 4, cudaMemcpyHostToDevice));
          const slimecclDevicePathInfo before = pathOf(comm);
          RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, op, comm, nullptr), comm);
          const slimecclDevicePathInfo after = pathOf(comm);
          RANK_CHECK(after.opsStaged - before.opsStaged == 1, "staged ", after.opsStaged - before.opsStaged);
          const std::vector<char> got = recv.read(0, count * 4);
          for (size_t i = 0; i < count; ++i) {
            float want = 0.0f, valueGot;
            for (int r = 0; r < kRanks; ++r)
              want += static_cast<float>((r + 1) * round) * static_cast<float>((i + r) % 7);
            memcpy(&valueGot, got.data() + i * 4, 4);
            RANK_CHECK(valueGot == want, "round ", round, " element ", i, ": ", valueGot, ", want ", want);
          }
        }
        RANK_CHECK_SUCCESS(slimecclRedOpDestroy(op, comm), comm);
      },
      linesOff());
}

INSTANTIATE_TEST_SUITE_P(Layouts, GpuReduction, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const auto& info) { return std::string(launchName(info.param)); });

}  // namespace
}  // namespace slimeccl_test
