#include "common/process_env.h"

#include <array>
#include <charconv>
#include <cstring>
#include <string_view>

#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

struct RankVariables {
  const char* rank;
  const char* size;
};

constexpr std::array<RankVariables, 4> kRankVariables{{
    {"SLIMECCL_RANK", "SLIMECCL_NRANKS"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
}};

int parseVariable(const char* name, const char* text) {
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, value);
  if (error != std::errc() || last != end || last == text) {
    throw UsageError(std::string(name) + "='" + text + "' is not an integer");
  }
  return value;
}

}  // namespace

ProcessPlacement discoverProcessPlacement(const EnvLookup& lookup) {
  for (const RankVariables& variables : kRankVariables) {
    const char* rankText = lookup(variables.rank);
    if (rankText == nullptr) continue;
    const char* sizeText = lookup(variables.size);
    if (sizeText == nullptr) {
      throw UsageError(std::string(variables.rank) + " is set but " + variables.size + " is not");
    }
    ProcessPlacement placement{parseVariable(variables.rank, rankText), parseVariable(variables.size, sizeText),
                               variables.rank};
    if (placement.count < 1 || placement.rank < 0 || placement.rank >= placement.count) {
      throw UsageError(std::string(variables.rank) + "=" + rankText + " and " + variables.size + "=" + sizeText +
                       " do not describe a process of the run");
    }
    return placement;
  }
  return {};
}

void requireBootstrapAddress(const ProcessPlacement& placement, const EnvLookup& lookup) {
  if (placement.count <= 1) return;
  const char* address = lookup("SLIMECCL_COMM_ID");
  if (address != nullptr && *address != '\0') return;
  throw UsageError(std::to_string(placement.count) + " processes were started (" + placement.source +
                   " is set) but SLIMECCL_COMM_ID is not: set SLIMECCL_COMM_ID=host:port (a free port on the host "
                   "of process 0) in every process, or start them with slimeccl-run, which sets it");
}

int globalRank(int processRank, int threadsPerProcess, int thread) { return processRank * threadsPerProcess + thread; }

}  // namespace slimeccl_perf
