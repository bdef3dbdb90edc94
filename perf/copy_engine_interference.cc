// Whether GPU-to-GPU AllGathers take SMs from the work beside them: on every GPU of the process
// (one rank thread each, slimecclCommInitAll), times a cuBLAS GEMM (fp16, M = N = K = 8192 by
// default) on a stream of its own, first alone, then while 1 GiB AllGathers run back to back on
// another stream, and prints the GEMM's slowdown. Copy engines move the AllGather's bytes, so the
// slowdown is what the two share (memory bandwidth, power), not SMs. With -N, NCCL's AllGather
// (loaded from that library) is measured the same way in the same run, as the anchor.
//
// A GEMM with random inputs runs the GPU at its power limit, and the clock settles over some 100 ms
// (docs/performance.md, "Beside a GEMM"): each timed window of GEMMs follows untimed warm-up GEMMs,
// alone and beside alike, so that both are timed at the settled clock. Rounds of alone and beside
// take turns, and the medians are compared.
//
//   copy_engine_interference [-g GPUS] [-s GEMM_SIZE] [-b ALLGATHER_BYTES] [-n GEMMS] [-w WARMUP_GEMMS]
//                            [-r ROUNDS] [-i (in place: no local copy)] [-N NCCL_LIBRARY]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <slimeccl.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/base/util/version_line.h"
#include "common/nccl_library.h"
#include "common/timing.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "copy_engine_interference: %s failed\n", what);
  exit(1);
}

struct Options {
  int gpus = 2;
  int gemmSize = 8192;
  size_t allgatherBytes = size_t{1} << 30;
  int gemms = 200;
  int warmupGemms = 200;
  int rounds = 5;
  bool inPlace = false;
  std::string ncclPath;
};

// fp16 bit patterns of random values of magnitude 0.5 to 1 and either sign.
std::vector<uint16_t> randomHalves(size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<uint16_t> values(count);
  for (uint16_t& v : values) v = static_cast<uint16_t>(0x3800 | (random() & 0x83ff));
  return values;
}

// One rank's GEMM: its matrices and its stream.
struct Gemm {
  cublasHandle_t blas = nullptr;
  cudaStream_t stream = nullptr;
  int size = 0;
  void *a = nullptr, *b = nullptr, *c = nullptr;

  void queue(int count) const {
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < count; ++i)
      check(
          cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &one, a, CUDA_R_16F, size, b, CUDA_R_16F, size,
                       &zero, c, CUDA_R_16F, size, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
          "cublasGemmEx");
  }
  // Milliseconds per GEMM over `count` GEMMs queued now.
  double time(int count) const {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, stream);
    queue(count);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms / count;
  }
};

// One library's AllGather on a rank: slimeccl's, or NCCL's through the loaded library.
struct Gatherer {
  slimecclComm_t comm = nullptr;
  slimecclStream_t stream = nullptr;
  const slimeccl_perf::NcclLibrary* nccl = nullptr;
  void* ncclComm = nullptr;
  cudaStream_t cuda = nullptr;

  void queue(const void* input, void* output, size_t count) const {
    if (nccl != nullptr) {
      nccl->allGather(input, output, count, 1 /* ncclUint8 */, ncclComm, cuda);
      return;
    }
    if (slimecclAllGather(input, output, count, slimecclUint8, comm, stream) != slimecclSuccess) {
      fprintf(stderr, "copy_engine_interference: slimecclAllGather failed: %s\n", slimecclGetLastError(comm));
      exit(1);
    }
  }
};

struct Result {
  double alone = 0, beside = 0;
  bool outlasted = true;
  unsigned long long queued = 0;  // AllGathers
};

// How many AllGathers every rank queues beside its GEMMs: the most any rank needs, since each
// rank's count comes from its own timings and an AllGather needs every rank.
class AllGatherCount {
 public:
  explicit AllGatherCount(int ranks) : sync_(ranks), wanted_(ranks) {}
  int agree(int rank, int wanted) {
    wanted_[rank] = wanted;
    sync_.arrive_and_wait();
    const int most = *std::max_element(wanted_.begin(), wanted_.end());
    sync_.arrive_and_wait();
    return most;
  }

 private:
  std::barrier<> sync_;
  std::vector<int> wanted_;
};

// Alone and beside in turns on one rank, the AllGathers back to back on their own stream.
Result measure(const Options& o, int rank, const Gemm& gemm, const Gatherer& gather, const void* input, void* output,
               AllGatherCount& count) {
  const size_t each = o.allgatherBytes / o.gpus;
  Result result;
  // The AllGather's and the settled GEMM's times alone, for how many AllGathers outlast the
  // warm-up and the timed GEMMs (with half again to spare).
  for (int i = 0; i < 3; ++i) gather.queue(input, output, each);
  check(cudaStreamSynchronize(gather.cuda) == cudaSuccess, "cudaStreamSynchronize");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) gather.queue(input, output, each);
  check(cudaStreamSynchronize(gather.cuda) == cudaSuccess, "cudaStreamSynchronize");
  const double gatherMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 5;
  gemm.queue(o.warmupGemms);
  const double gemmMs = gemm.time(o.gemms);
  const int allgathers = count.agree(rank, static_cast<int>((o.warmupGemms + o.gemms) * gemmMs * 1.5 / gatherMs) + 4);
  result.queued = 8;
  std::vector<double> aloneMs, besideMs;
  cudaEvent_t gathered;
  check(cudaEventCreateWithFlags(&gathered, cudaEventDisableTiming) == cudaSuccess, "cudaEventCreateWithFlags");
  for (int round = 0; round < o.rounds; ++round) {
    gemm.queue(o.warmupGemms);
    aloneMs.push_back(gemm.time(o.gemms));
    // The warm-up GEMMs run while the AllGathers are queued.
    gemm.queue(o.warmupGemms);
    for (int i = 0; i < allgathers; ++i) gather.queue(input, output, each);
    result.queued += allgathers;
    check(cudaEventRecord(gathered, gather.cuda) == cudaSuccess, "cudaEventRecord");
    besideMs.push_back(gemm.time(o.gemms));
    // "Beside" holds only if the AllGathers outlasted the GEMMs.
    if (cudaEventQuery(gathered) == cudaSuccess) result.outlasted = false;
    check(cudaStreamSynchronize(gather.cuda) == cudaSuccess, "cudaStreamSynchronize");
  }
  cudaEventDestroy(gathered);
  result.alone = slimeccl_perf::medianOf(aloneMs);
  result.beside = slimeccl_perf::medianOf(besideMs);
  return result;
}

void print(const Options& o, int rank, const char* library, const Result& r, const char* route) {
  printf(
      "GPU %d: GEMM %dx%dx%d fp16 %.3f ms alone, %.3f ms beside %zu-byte %s AllGathers (%s%s), medians of %d rounds: "
      "%+.1f%%\n",
      rank, o.gemmSize, o.gemmSize, o.gemmSize, r.alone, r.beside, o.allgatherBytes, library,
      o.inPlace ? "in place" : "out of place", route, o.rounds, (r.beside / r.alone - 1) * 100);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    fputs(slimeccl::versionLine("copy_engine_interference").c_str(), stdout);
    return 0;
  }
  Options o;
  for (int opt; (opt = getopt(argc, argv, "g:s:b:n:w:r:iN:")) != -1;) {
    switch (opt) {
      case 'g': o.gpus = atoi(optarg); break;
      case 's': o.gemmSize = atoi(optarg); break;
      case 'b': o.allgatherBytes = strtoull(optarg, nullptr, 10); break;
      case 'n': o.gemms = atoi(optarg); break;
      case 'w': o.warmupGemms = atoi(optarg); break;
      case 'r': o.rounds = atoi(optarg); break;
      case 'i': o.inPlace = true; break;
      case 'N': o.ncclPath = optarg; break;
      default:
        fprintf(stderr,
                "usage: %s [-g GPUS] [-s GEMM_SIZE] [-b ALLGATHER_BYTES] [-n GEMMS] [-w WARMUP_GEMMS] [-r ROUNDS] [-i] "
                "[-N NCCL_LIBRARY]\n",
                argv[0]);
        return 2;
    }
  }
  if (o.gpus < 2 || o.gemms < 1 || o.warmupGemms < 0 || o.rounds < 1) {
    fprintf(stderr, "copy_engine_interference: -g takes 2 or more, -n and -r 1 or more, -w 0 or more\n");
    return 2;
  }
  std::unique_ptr<slimeccl_perf::NcclLibrary> nccl;
  std::vector<char> ncclId;
  if (!o.ncclPath.empty()) {
    nccl = std::make_unique<slimeccl_perf::NcclLibrary>(o.ncclPath);
    if (!nccl->usable()) {
      fprintf(stderr, "copy_engine_interference: -N %s: %s\n", o.ncclPath.c_str(), nccl->why().c_str());
      return 2;
    }
    printf("# NCCL: %s\n", nccl->description().c_str());
    ncclId.resize(slimeccl_perf::NcclLibrary::kUniqueIdBytes);
    nccl->uniqueId(ncclId.data());
  }
  std::vector<int> devices(o.gpus);
  for (int i = 0; i < o.gpus; ++i) devices[i] = i;
  std::vector<slimecclComm_t> comms(o.gpus);
  check(slimecclCommInitAll(comms.data(), o.gpus, devices.data()) == slimecclSuccess, "slimecclCommInitAll");
  std::vector<Result> ours(o.gpus), theirs(o.gpus);
  AllGatherCount count(o.gpus);
  std::vector<unsigned long long> gpuToGpu(o.gpus), allgathers(o.gpus);  // by copy engine, all
  std::vector<std::thread> ranks;
  for (int r = 0; r < o.gpus; ++r)
    ranks.emplace_back([&, r] {
      cudaSetDevice(r);
      Gemm gemm;
      gemm.size = o.gemmSize;
      Gatherer gather;
      gather.comm = comms[r];
      check(cudaStreamCreateWithFlags(&gemm.stream, cudaStreamNonBlocking) == cudaSuccess &&
                cudaStreamCreateWithFlags(&gather.cuda, cudaStreamNonBlocking) == cudaSuccess,
            "cudaStreamCreateWithFlags");
      check(slimecclStreamCreateFromCuda(&gather.stream, gather.cuda) == slimecclSuccess,
            "slimecclStreamCreateFromCuda");
      check(cublasCreate(&gemm.blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
      cublasSetStream(gemm.blas, gemm.stream);
      const size_t matrix = size_t{2} * o.gemmSize * o.gemmSize;
      void *send, *recv;
      check(cudaMalloc(&gemm.a, matrix) == cudaSuccess && cudaMalloc(&gemm.b, matrix) == cudaSuccess &&
                cudaMalloc(&gemm.c, matrix) == cudaSuccess &&
                cudaMalloc(&send, o.allgatherBytes / o.gpus) == cudaSuccess &&
                cudaMalloc(&recv, o.allgatherBytes) == cudaSuccess,
            "cudaMalloc");
      // Random inputs: a GEMM of zeros draws less power and so would hide what the copies cost it.
      const std::vector<uint16_t> values = randomHalves(matrix / 2, r);
      cudaMemcpy(gemm.a, values.data(), matrix, cudaMemcpyHostToDevice);
      cudaMemcpy(gemm.b, values.data(), matrix, cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      const void* input = o.inPlace ? static_cast<char*>(recv) + r * (o.allgatherBytes / o.gpus) : send;
      const slimecclDevicePathInfo before = [&] {
        slimecclDevicePathInfo info{};
        slimecclCommGetDevicePathInfo(comms[r], &info);
        return info;
      }();
      ours[r] = measure(o, r, gemm, gather, input, recv, count);
      slimecclDevicePathInfo after{};
      slimecclCommGetDevicePathInfo(comms[r], &after);
      gpuToGpu[r] = after.gpuToGpu ? (after.opsGpuToGpu - before.opsGpuToGpu) - (after.opsBySms - before.opsBySms) : 0;
      allgathers[r] = ours[r].queued;
      if (nccl) {
        Gatherer theirGather = gather;
        theirGather.nccl = nccl.get();
        theirGather.ncclComm = nccl->initRank(o.gpus, ncclId.data(), r);
        theirs[r] = measure(o, r, gemm, theirGather, input, recv, count);
        nccl->destroy(theirGather.ncclComm);
      }
      slimecclStreamDestroy(gather.stream);
      cublasDestroy(gemm.blas);
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < o.gpus; ++r) {
    const std::string route =
        ", " + std::to_string(gpuToGpu[r]) + " of " + std::to_string(allgathers[r]) + " by copy engine";
    print(o, r, "slimeccl", ours[r], route.c_str());
    if (nccl) print(o, r, "NCCL", theirs[r], "");
  }
  for (slimecclComm_t comm : comms) slimecclCommDestroy(comm);
  int status = 0;
  for (int r = 0; r < o.gpus; ++r) {
    if (!ours[r].outlasted || (nccl && !theirs[r].outlasted)) {
      fprintf(stderr, "copy_engine_interference: GPU %d: the AllGathers ended before the GEMMs\n", r);
      status = 1;
    }
    if (gpuToGpu[r] != allgathers[r]) {
      fprintf(stderr, "copy_engine_interference: GPU %d: %llu of %llu AllGathers went by copy engine\n", r, gpuToGpu[r],
              allgathers[r]);
      status = 1;
    }
  }
  return status;
}
