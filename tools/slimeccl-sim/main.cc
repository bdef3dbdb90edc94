// slimeccl-sim: runs the schedules of one collective call for every rank without a network, to
// count their traffic, estimate their alpha-beta time and check their data (see --help).
#include <cstdio>
#include <string>

#include "src/base/util/version_line.h"
#include "tools/slimeccl-sim/command_line.h"
#include "tools/slimeccl-sim/gpu_prediction.h"
#include "tools/slimeccl-sim/single_run.h"
#include "tools/slimeccl-sim/sweep.h"

int main(int argc, char** argv) {
  using namespace slimeccl::sim;
  Options options;
  std::string error;
  if (!parseCommandLine(argc, argv, &options, &error)) {
    fprintf(stderr, "slimeccl-sim: %s\n%s", error.c_str(), usageText());
    return 2;
  }
  if (options.help) {
    fputs(usageText(), stdout);
    return 0;
  }
  if (options.version) {
    fputs(slimeccl::versionLine("slimeccl-sim").c_str(), stdout);
    return 0;
  }
  if (options.predictGpus > 0)
    return runGpuPrediction(options.predictGpus, options.measured, static_cast<double>(options.predictFromBytes));
  return options.sweep ? runSweep(options.cost) : runSingle(options);
}
