#include "tools/slimeccl-info/tuner_table.h"

#include <fmt/format.h>

#include <climits>
#include <cstdint>

#include "algorithms/tuner.h"
#include "src/error.h"
#include "src/param.h"
#include "src/util/strings.h"

namespace slimeccl::info {
namespace {

std::string sizeBound(size_t bytes) { return bytes == SIZE_MAX ? "inf" : humanBytes(bytes); }

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
    line.ranks = fmt::format("{}..{}", row.minRanks, row.maxRanks == INT_MAX ? "inf" : std::to_string(row.maxRanks));
    line.topology = topoClassName(row.topo);
    line.algorithm = algoName(row.algo);
    line.chunk = humanBytes(row.chunkBytes);
    out->push_back(line);
  }
  return slimecclSuccess;
}

}  // namespace slimeccl::info
