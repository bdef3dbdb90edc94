// Whether this rank's device buffers reach peers on other hosts by GPUDirect RDMA: gathers the
// facts (the GPU's attributes, what the module's device takes, the PCI path between them in this
// machine's topology, SLIMECCL_GDR and SLIMECCL_GDR_LEVEL) and lets topo/gdr_choice.h decide.
#pragma once

#include <string>

#include "include/slimeccl.h"
#include "net/net.h"
#include "topo/gdr_choice.h"

namespace slimeccl {

struct GdrSettings {
  std::string setting;   // SLIMECCL_GDR
  std::string farthest;  // SLIMECCL_GDR_LEVEL
};

// `module` serves the rank's peers on other hosts (nullptr: none); `gpu` is the rank's GPU (-1:
// none). slimecclInvalidArgument with a sentence for a setting it cannot read.
slimecclResult_t chooseGdrForRank(int gpu, NetModule* module, const NetContext& ctx, const GdrSettings& settings,
                                  GdrChoice* out);

}  // namespace slimeccl
