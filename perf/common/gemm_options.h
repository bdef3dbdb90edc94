// The command line of allgather_gemm_perf: shapes instead of a size sweep.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slimeccl.h"

namespace slimeccl_perf {

// C[M x N] = AllGather(A)[M x K] x B[K x N] with M = nranks x mLocal.
struct GemmShape {
  size_t mLocal;
  size_t k;
  size_t n;
};

struct GemmOptions {
  // Tensor-parallel linear layers: a few rows per rank (decode) up to thousands (prefill), hidden
  // sizes of 1K to 8K; sized so that a 2-core machine runs the default set in a few minutes.
  std::vector<GemmShape> shapes{{64, 1024, 1024},   {256, 1024, 4096},  {1024, 1024, 1024},
                                {1024, 4096, 1024}, {4096, 1024, 1024}, {64, 8192, 8192}};
  slimecclDataType_t type = slimecclFloat;
  bool typeGiven = false;
  // -D 1: device buffers on each rank's GPU, GEMMs by cuBLAS, beside NCCL's AllGather + cuBLAS.
  bool deviceBuffers = false;
  // -B: the NCCL library of that baseline (dlopen'd; slimeccl's own NCCL library is refused).
  std::string ncclLibrary = "libnccl.so.2";
  int iters = 5;
  int warmupIters = 1;
  int check = 1;
  int threads = 1;
  std::string algo;
  bool help = false;
  bool version = false;
};

// "-s 64x1024x1024,1024x4096x1024" (mLocal x K x N), "-d float|double|bfloat16|half", "-n", "-w",
// "-c", "-t", "-g" (as -t: nccl-tests' name with -D 1), "-D 0|1", "-B", "-A", "-h". With -D 1 and
// no -s or -d: the tensor-parallel shapes, bfloat16. Throws UsageError on anything else.
GemmOptions parseGemmOptions(std::span<const char* const> args);
std::vector<GemmShape> parseShapes(std::string_view text);
// Tensor-parallel layers of 8K hidden size (mLocal x K x N per rank): the default shapes on GPUs.
const std::vector<GemmShape>& deviceGemmShapes();
std::string gemmUsageText(std::string_view program);

}  // namespace slimeccl_perf
