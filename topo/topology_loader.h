// Loads a topology with hwloc: the live machine, or an hwloc XML file standing in for it
// (SLIMECCL_TOPO_FILE), optionally writing what was loaded as XML (SLIMECCL_TOPO_DUMP_FILE).
#pragma once

#include <string>

#include "include/slimeccl.h"
#include "topo/topology.h"

namespace slimeccl {

struct TopoSource {
  std::string xmlPath;   // read this hwloc XML instead of the live machine ("" = live)
  std::string dumpPath;  // write the topology in use here as hwloc XML ("" = no dump)
};

TopoSource topoSourceFromEnv();

// The live machine also gets rdma-core's verbs devices and its interfaces' speeds and states.
slimecclResult_t loadTopology(const TopoSource& source, TopoSummary* out);

}  // namespace slimeccl
