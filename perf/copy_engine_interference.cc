// Whether GPU-to-GPU AllGathers take SMs from the work beside them: on every GPU of the process
// (one rank thread each, slimecclCommInitAll), times a cuBLAS GEMM (fp16, M = N = K = 8192 by
// default) on a stream of its own, first alone, then while 1 GiB AllGathers run back to back on
// another stream, and prints the GEMM's slowdown. Copy engines move the AllGather's bytes, so the
// slowdown is what the two share (memory bandwidth, power), not SMs. Rounds of alone and beside
// take turns, and the medians are compared, so that clock drift over the run falls on both.
//
//   copy_engine_interference [-g GPUS] [-s GEMM_SIZE] [-b ALLGATHER_BYTES] [-n GEMMS] [-a ALLGATHERS]
//                            [-r ROUNDS] [-i (in place: no local copy)]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <slimeccl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "src/base/util/version_line.h"
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
  int gemms = 50;
  int allgathers = 100;
  int rounds = 5;
  bool inPlace = false;
};

// fp16 bit patterns of random values of magnitude 0.5 to 1 and either sign.
std::vector<uint16_t> randomHalves(size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<uint16_t> values(count);
  for (uint16_t& v : values) v = static_cast<uint16_t>(0x3800 | (random() & 0x83ff));
  return values;
}

// Milliseconds per GEMM over `gemms` GEMMs on `stream`.
float timeGemms(cublasHandle_t blas, cudaStream_t stream, const Options& o, const void* a, const void* b, void* c) {
  const float one = 1.0f, zero = 0.0f;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  for (int i = 0; i < o.gemms; ++i)
    check(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, o.gemmSize, o.gemmSize, o.gemmSize, &one, a, CUDA_R_16F,
                       o.gemmSize, b, CUDA_R_16F, o.gemmSize, &zero, c, CUDA_R_16F, o.gemmSize, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
          "cublasGemmEx");
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / o.gemms;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    fputs(slimeccl::versionLine("copy_engine_interference").c_str(), stdout);
    return 0;
  }
  Options o;
  for (int opt; (opt = getopt(argc, argv, "g:s:b:n:a:r:i")) != -1;) {
    switch (opt) {
      case 'g': o.gpus = atoi(optarg); break;
      case 's': o.gemmSize = atoi(optarg); break;
      case 'b': o.allgatherBytes = strtoull(optarg, nullptr, 10); break;
      case 'n': o.gemms = atoi(optarg); break;
      case 'a': o.allgathers = atoi(optarg); break;
      case 'r': o.rounds = atoi(optarg); break;
      case 'i': o.inPlace = true; break;
      default:
        fprintf(stderr,
                "usage: %s [-g GPUS] [-s GEMM_SIZE] [-b ALLGATHER_BYTES] [-n GEMMS] [-a ALLGATHERS] [-r ROUNDS] [-i]\n",
                argv[0]);
        return 2;
    }
  }
  if (o.gpus < 2 || o.gemms < 1 || o.allgathers < 1 || o.rounds < 1) {
    fprintf(stderr, "copy_engine_interference: -g takes 2 or more, -n, -a and -r 1 or more\n");
    return 2;
  }
  std::vector<int> devices(o.gpus);
  for (int i = 0; i < o.gpus; ++i) devices[i] = i;
  std::vector<slimecclComm_t> comms(o.gpus);
  check(slimecclCommInitAll(comms.data(), o.gpus, devices.data()) == slimecclSuccess, "slimecclCommInitAll");
  std::vector<float> alone(o.gpus), beside(o.gpus);
  std::vector<unsigned long long> gpuToGpu(o.gpus);  // by copy engine
  std::vector<char> outlasted(o.gpus, true);
  std::vector<std::thread> ranks;
  for (int r = 0; r < o.gpus; ++r)
    ranks.emplace_back([&, r] {
      cudaSetDevice(r);
      cudaStream_t gemmStream, commStream;
      cudaStreamCreateWithFlags(&gemmStream, cudaStreamNonBlocking);
      cudaStreamCreateWithFlags(&commStream, cudaStreamNonBlocking);
      slimecclStream_t stream;
      check(slimecclStreamCreateFromCuda(&stream, commStream) == slimecclSuccess, "slimecclStreamCreateFromCuda");
      cublasHandle_t blas;
      check(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
      cublasSetStream(blas, gemmStream);
      const size_t matrix = size_t{2} * o.gemmSize * o.gemmSize;
      void *a, *b, *c, *send, *recv;
      check(cudaMalloc(&a, matrix) == cudaSuccess && cudaMalloc(&b, matrix) == cudaSuccess &&
                cudaMalloc(&c, matrix) == cudaSuccess && cudaMalloc(&send, o.allgatherBytes / o.gpus) == cudaSuccess &&
                cudaMalloc(&recv, o.allgatherBytes) == cudaSuccess,
            "cudaMalloc");
      // Random inputs: a GEMM of zeros draws less power and so would hide what the copies cost it.
      const std::vector<uint16_t> values = randomHalves(matrix / 2, r);
      cudaMemcpy(a, values.data(), matrix, cudaMemcpyHostToDevice);
      cudaMemcpy(b, values.data(), matrix, cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      timeGemms(blas, gemmStream, o, a, b, c);  // warm-up
      const size_t count = o.allgatherBytes / o.gpus;
      const void* input = o.inPlace ? static_cast<char*>(recv) + r * count : send;
      std::vector<double> aloneMs, besideMs;
      cudaEvent_t gathered;
      check(cudaEventCreateWithFlags(&gathered, cudaEventDisableTiming) == cudaSuccess, "cudaEventCreateWithFlags");
      for (int round = 0; round < o.rounds; ++round) {
        aloneMs.push_back(timeGemms(blas, gemmStream, o, a, b, c));
        // AllGathers queued before the GEMMs start, as many on every rank, outlasting them.
        for (int i = 0; i < o.allgathers; ++i)
          if (slimecclAllGather(input, recv, count, slimecclUint8, comms[r], stream) != slimecclSuccess) {
            fprintf(stderr, "copy_engine_interference: slimecclAllGather failed: %s\n", slimecclGetLastError(comms[r]));
            exit(1);
          }
        check(cudaEventRecord(gathered, commStream) == cudaSuccess, "cudaEventRecord");
        besideMs.push_back(timeGemms(blas, gemmStream, o, a, b, c));
        // "Beside" holds only if the AllGathers outlasted the GEMMs.
        if (cudaEventQuery(gathered) == cudaSuccess) outlasted[r] = false;
        check(cudaStreamSynchronize(commStream) == cudaSuccess, "cudaStreamSynchronize");
      }
      cudaEventDestroy(gathered);
      alone[r] = static_cast<float>(slimeccl_perf::medianOf(aloneMs));
      beside[r] = static_cast<float>(slimeccl_perf::medianOf(besideMs));
      slimecclDevicePathInfo info{};
      slimecclCommGetDevicePathInfo(comms[r], &info);
      gpuToGpu[r] = info.gpuToGpu ? info.opsGpuToGpu - info.opsBySms : 0;
      slimecclStreamDestroy(stream);
      cublasDestroy(blas);
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < o.gpus; ++r)
    printf(
        "GPU %d: GEMM %dx%dx%d fp16 %.3f ms alone, %.3f ms beside %zu-byte AllGathers (%s, %llu by copy engine), "
        "medians of %d rounds: %+.1f%%\n",
        r, o.gemmSize, o.gemmSize, o.gemmSize, alone[r], beside[r], o.allgatherBytes,
        o.inPlace ? "in place" : "out of place", gpuToGpu[r], o.rounds, (beside[r] / alone[r] - 1) * 100);
  for (slimecclComm_t comm : comms) slimecclCommDestroy(comm);
  const unsigned long long expected = static_cast<unsigned long long>(o.allgathers) * o.rounds;
  for (int r = 0; r < o.gpus; ++r) {
    if (!outlasted[r])
      fprintf(stderr, "copy_engine_interference: GPU %d: the AllGathers ended before the GEMMs (raise -a)\n", r);
    if (gpuToGpu[r] != expected)
      fprintf(stderr, "copy_engine_interference: GPU %d: %llu of %llu AllGathers went by copy engine\n", r, gpuToGpu[r],
              expected);
    if (!outlasted[r] || gpuToGpu[r] != expected) return 1;
  }
  return 0;
}
