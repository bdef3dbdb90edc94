// The tuner table in force (algorithms/tuner.h), with SLIMECCL_ALGO's overrides first, as lines
// for the report.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl::info {

struct TunerLine {
  std::string collective;
  std::string sizes;     // "[0 B, 64.0 KiB)", or "all" for an override
  std::string ranks;     // "2..inf"
  std::string topology;  // "any", "one host", "several hosts"
  std::string algorithm;
  std::string chunk;
  bool forced = false;  // from SLIMECCL_ALGO
};

// InvalidArgument with the tuner's sentence when SLIMECCL_ALGO does not parse.
slimecclResult_t tunerTable(std::vector<TunerLine>* out);

// One row of the GPU path's choices (algorithms/gpu_tuning.h).
struct GpuChoiceLine {
  std::string choice;      // "copy kernel up to", "reduction blocks"
  std::string collective;  // "p2p" for Send/Recv
  std::string ranks;
  std::string sizes;
  std::string value;  // a size or a block count
};

std::vector<GpuChoiceLine> gpuChoiceLines();

}  // namespace slimeccl::info
