#include "tools/slimeccl-info/tuner_table.h"

#include <fmt/format.h>

#include <climits>
#include <cstdint>

#include "algorithms/gpu_tuning.h"
#include "algorithms/tuner.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/util/strings.h"

namespace slimeccl::info {
namespace {

std::string sizeBound(size_t bytes) { return bytes == SIZE_MAX ? "inf" : humanBytes(bytes); }
std::string rankRange(int minRanks, int maxRanks) {
  return fmt::format("{}..{}", minRanks, maxRanks == INT_MAX ? "inf" : std::to_string(maxRanks));
}
std::string valueOf(const GpuChoiceRow& row) {
  switch (row.choice) {
    case GpuChoice::CopyKernelBytes:
    case GpuChoice::LineBytes: return humanBytes(row.value);
    case GpuChoice::ReductionAlgorithm: return gpuReductionAlgoName(static_cast<GpuReductionAlgo>(row.value));
    case GpuChoice::ReductionBlocks: return std::to_string(row.value);
    case GpuChoice::BroadcastAlgorithm: return gpuBroadcastAlgoName(static_cast<GpuBroadcastAlgo>(row.value));
  }
  return "?";
}

}  // namespace

slimecclResult_t tunerTable(std::vector<TunerLine>* out) {
  AlgoOverrides overrides;
  SLIMECCL_CHECK(AlgoOverrides::parse(envString("SLIMECCL_ALGO"), &overrides));
  out->clear();
  for (const auto& [coll, algo] : overrides.entries)
    out->push_back({collKey(coll), "all", "any", "any", algoName(algo), "-", true});
  for (const TunerRow& row : defaultTunerTable()) {
    TunerLine line;
    line.collective = collKey(row.coll);
    line.sizes = fmt::format("[{}, {})", sizeBound(row.minBytes), sizeBound(row.maxBytes));
    line.ranks = rankRange(row.minRanks, row.maxRanks);
    line.topology = topoClassName(row.topo);
    line.algorithm = algoName(row.algo);
    line.chunk = humanBytes(row.chunkBytes);
    out->push_back(line);
  }
  return slimecclSuccess;
}

std::vector<GpuChoiceLine> gpuChoiceLines() {
  std::vector<GpuChoiceLine> out;
  for (const GpuChoiceRow& row : gpuChoiceTable()) {
    GpuChoiceLine line;
    line.choice = gpuChoiceName(row.choice);
    line.collective = collKey(row.coll);
    line.ranks = rankRange(row.minRanks, row.maxRanks);
    line.sizes = fmt::format("[{}, {})", sizeBound(row.minBytes), sizeBound(row.maxBytes));
    line.value = valueOf(row);
    out.push_back(line);
  }
  return out;
}

}  // namespace slimeccl::info
