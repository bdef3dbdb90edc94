// The nccl-tests command line, shared by every perf tool.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/timing.h"
#include "slimeccl.h"

namespace slimeccl_perf {

struct Options {
  size_t minBytes = 32u << 20;
  size_t maxBytes = 32u << 20;
  size_t stepBytes = 1u << 20;
  size_t stepFactor = 1;
  int iters = 20;
  int warmupIters = 5;
  int check = 1;
  int threads = 1;
  std::vector<slimecclDataType_t> dataTypes{slimecclFloat};
  std::vector<slimecclRedOp_t> redOps{slimecclSum};
  int root = 0;
  bool blocking = false;
  TimeAverage average = TimeAverage::Mean;
  std::string algo;
  bool sharedBuffers = false;  // -R 1: send and receive buffers from slimecclMemAlloc
  bool deviceBuffers = false;  // -D 1: send and receive buffers in GPU memory, ops on a CUDA stream
  int rounds = 5;              // -K: turns each algorithm of an -A list takes per size
  bool help = false;
  bool version = false;
};

// Parses the arguments after the program name. Accepts "-b 8", "-b8", "--minbytes 8" and
// "--minbytes=8". Throws UsageError on an unknown flag, a bad value or an inconsistent set.
Options parseOptions(std::span<const char* const> args);

// "1024", "64K", "8M", "2G" (suffixes are powers of 1024, either case). Throws UsageError.
size_t parseSize(std::string_view text);

std::string usageText(std::string_view program);

// The algorithms an -A value names: "ring,hd,default" is three to compare; a value naming its
// collective ("allgather:ring,broadcast:tree") is one SLIMECCL_ALGO setting. Empty without -A.
std::vector<std::string> algoList(std::string_view algo);
// The name in an -A list that stands for the tuner's own choice.
constexpr std::string_view kTunerChoice = "default";

// The SLIMECCL_ALGO value that -A asks for: "collective:algo", or algo unchanged when it already
// names its collective(s).
std::string algoEnvValue(std::string_view collective, std::string_view algo);

}  // namespace slimeccl_perf
