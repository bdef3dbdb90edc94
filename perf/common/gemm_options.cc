#include "common/gemm_options.h"

#include <charconv>

#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

size_t parseCount(std::string_view text, std::string_view what, size_t min) {
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min)
    throw UsageError(std::string(what) + " '" + std::string(text) + "' is not a whole number of at least " +
                     std::to_string(min));
  return value;
}

int parseInt(std::string_view text, std::string_view what, int min) {
  return static_cast<int>(std::min<size_t>(parseCount(text, what, static_cast<size_t>(min)), 1u << 30));
}

GemmShape parseShape(std::string_view text) {
  const size_t first = text.find('x');
  const size_t second = first == std::string_view::npos ? first : text.find('x', first + 1);
  if (second == std::string_view::npos) throw UsageError("shape '" + std::string(text) + "' is not MLOCALxKxN");
  return {parseCount(text.substr(0, first), "mLocal", 1),
          parseCount(text.substr(first + 1, second - first - 1), "K", 1), parseCount(text.substr(second + 1), "N", 1)};
}

}  // namespace

std::vector<GemmShape> parseShapes(std::string_view text) {
  std::vector<GemmShape> shapes;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    shapes.push_back(parseShape(text.substr(0, comma)));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (shapes.empty()) throw UsageError("-s needs at least one shape");
  return shapes;
}

const std::vector<GemmShape>& deviceGemmShapes() {
  static const std::vector<GemmShape> shapes{
      {4096, 8192, 14336}, {8192, 8192, 14336}, {4096, 8192, 5120}, {16384, 8192, 3584}};
  return shapes;
}

GemmOptions parseGemmOptions(std::span<const char* const> args) {
  GemmOptions options;
  bool shapesGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view flag = args[i];
    if (flag == "-h" || flag == "--help") {
      options.help = true;
      continue;
    }
    if (flag == "--version") {
      options.version = true;
      continue;
    }
    if (flag.size() != 2 || flag[0] != '-') throw UsageError("unknown argument '" + std::string(flag) + "'");
    if (i + 1 == args.size()) throw UsageError(std::string(flag) + " needs a value");
    const std::string_view value = args[++i];
    switch (flag[1]) {
      case 's':
        options.shapes = parseShapes(value);
        shapesGiven = true;
        break;
      case 'n': options.iters = parseInt(value, "-n", 1); break;
      case 'w': options.warmupIters = parseInt(value, "-w", 0); break;
      case 'c': options.check = parseInt(value, "-c", 0); break;
      case 't':
      case 'g': options.threads = parseInt(value, flag[1] == 't' ? "-t" : "-g", 1); break;
      case 'D': options.deviceBuffers = parseInt(value, "-D", 0) != 0; break;
      case 'B': options.ncclLibrary = value; break;
      case 'A': options.algo = value; break;
      case 'd':
        if (value == "float")
          options.type = slimecclFloat;
        else if (value == "double")
          options.type = slimecclDouble;
        else if (value == "bfloat16")
          options.type = slimecclBfloat16;
        else if (value == "half")
          options.type = slimecclFloat16;
        else
          throw UsageError("-d takes float, double, bfloat16 or half, not '" + std::string(value) + "'");
        options.typeGiven = true;
        break;
      default: throw UsageError("unknown flag '" + std::string(flag) + "'");
    }
  }
  if (options.deviceBuffers) {
    if (!shapesGiven) options.shapes = deviceGemmShapes();
    if (!options.typeGiven) options.type = slimecclBfloat16;
  } else if (options.type == slimecclBfloat16 || options.type == slimecclFloat16) {
    throw UsageError("-d bfloat16 and half need -D 1 (the host BLAS has no GEMM of them)");
  }
  return options;
}

std::string gemmUsageText(std::string_view program) {
  return "Usage: " + std::string(program) +
         " [options]\n"
         "  -s MLOCALxKxN[,...]  shapes: C[nranks*MLOCAL x N] = AllGather(A)[.. x K] x B[K x N]\n"
         "  -d TYPE              float, double, or with -D 1 bfloat16 or half (float; bfloat16 with -D 1)\n"
         "  -n ITERS             timed iterations per measurement (5)\n"
         "  -w ITERS             warm-up iterations per shape (1)\n"
         "  -c 0|1               check C against a plain GEMM of the gathered A, bit for bit (1)\n"
         "  -t THREADS           ranks as threads of each process (1); -g is the same (nccl-tests' name)\n"
         "  -D 0|1               device buffers, each rank on its own GPU, GEMMs by cuBLAS (0); with -D 1 the\n"
         "                       default shapes are 4096x8192x14336,8192x8192x14336,4096x8192x5120,16384x8192x3584\n"
         "  -B LIBRARY           with -D 1: the NCCL library of the NCCL AllGather + cuBLAS column\n"
         "                       (libnccl.so.2; slimeccl's own NCCL library is refused)\n"
         "  -A ALGO              force the AllGather algorithm (ring, hd, direct, hier)\n"
         "  --version            print the version\n"
         "Times are per call: the median over iterations (the four take turns), the mean over\n"
         "ranks. speedup = sequential / overlapped;\n"
         "efficiency = (sequential - overlapped) / min(allgather, gemm); with -D 1,\n"
         "efficiency = max(allgather, gemm) / overlapped and vs_nccl = NCCL AllGather + cuBLAS / overlapped.\n";
}

}  // namespace slimeccl_perf
