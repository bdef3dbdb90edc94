// slimeccl-sim's command line.
#pragma once

#include <string>
#include <vector>

#include "tools/slimeccl-sim/alpha_beta.h"
#include "tools/slimeccl-sim/sim_call.h"

namespace slimeccl::sim {

// The most ranks the tool simulates: ring AllReduce on 4096 ranks is already ~67 million steps.
inline constexpr int kMaxRanks = 4096;

struct Options {
  SimCall call;
  bool algoChosenByTuner = false;  // no --algo: the tuner's default for this call
  bool printSteps = false;
  bool sweep = false;
  int predictGpus = 0;                 // --predict-gpus: predict this GPU count from measured tables
  std::vector<std::string> measured;   // --measured files (perf/compare_nccl_tests.sh's tables)
  size_t predictFromBytes = 4u << 20;  // --from-bytes: the sizes fitted and predicted
  CostModel cost;
  bool help = false;
  bool version = false;
};

// Returns false with *error set when the arguments are wrong.
bool parseCommandLine(int argc, char** argv, Options* out, std::string* error);
const char* usageText();

}  // namespace slimeccl::sim
