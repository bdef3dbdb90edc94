// Which process of a multi-process run this is, read from the launcher's environment.
#pragma once

#include <functional>
#include <string>

namespace slimeccl_perf {

struct ProcessPlacement {
  int rank = 0;
  int count = 1;
  std::string source;  // the rank variable that told us; empty for a lone process
};

using EnvLookup = std::function<const char*(const char*)>;

// Tries SLIMECCL_RANK/SLIMECCL_NRANKS (slimeccl-run), OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE,
// PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS in that order; none gives a lone process. Throws
// UsageError when the first pair found is incomplete or out of range.
ProcessPlacement discoverProcessPlacement(const EnvLookup& lookup);

// Several processes share one unique id only through SLIMECCL_COMM_ID; throws UsageError saying so
// when it is missing.
void requireBootstrapAddress(const ProcessPlacement& placement, const EnvLookup& lookup);

// Ranks are numbered process by process, threads within a process.
int globalRank(int processRank, int threadsPerProcess, int thread);

}  // namespace slimeccl_perf
