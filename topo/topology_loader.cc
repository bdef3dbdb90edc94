#include "topo/topology_loader.h"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "src/base/error.h"
#include "src/base/param.h"
#include "topo/hwloc_reader.h"
#include "topo/live_details.h"

namespace slimeccl {
namespace {

// Device backends that would initialise GPU runtimes or talk to an X server in every process
// that creates a communicator; GPUs are found through their PCI devices instead.
constexpr const char* kSkippedComponents[] = {"gl", "opencl", "cuda", "nvml", "rsmi", "levelzero"};

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string runtimeHwlocVersion() {
  unsigned v = hwloc_get_api_version();
  return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

}  // namespace

TopoSource topoSourceFromEnv() {
  return TopoSource{envString("SLIMECCL_TOPO_FILE"), envString("SLIMECCL_TOPO_DUMP_FILE")};
}

slimecclResult_t loadTopology(const TopoSource& source, TopoSummary* out) {
  bool live = source.xmlPath.empty();
  if (!live && access(source.xmlPath.c_str(), R_OK) != 0)
    return fail(slimecclInvalidArgument, "SLIMECCL_TOPO_FILE='{}' cannot be read: {}", source.xmlPath, strerror(errno));
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0)
    return fail(slimecclSystemError, "topology: hwloc_topology_init failed: {}", strerror(errno));
  TopologyHandle topology(raw);
  // A file keeps what it holds; the live machine keeps only the devices that matter (and the
  // bridges above them), which is also what a dump then holds.
  hwloc_topology_set_io_types_filter(raw, live ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT : HWLOC_TYPE_FILTER_KEEP_ALL);
  if (live) {
    for (const char* name : kSkippedComponents)
      hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
  }
  // hwloc checks the XML in set_xml or in load, depending on its version and XML backend.
  bool xmlOk = live || hwloc_topology_set_xml(raw, source.xmlPath.c_str()) == 0;
  if (!xmlOk || hwloc_topology_load(raw) != 0) {
    if (live) return fail(slimecclSystemError, "topology: hwloc cannot discover this machine: {}", strerror(errno));
    return fail(slimecclInvalidArgument, "SLIMECCL_TOPO_FILE='{}' is not a valid hwloc XML topology: {}",
                source.xmlPath, strerror(errno));
  }
  if (!source.dumpPath.empty() && hwloc_topology_export_xml(raw, source.dumpPath.c_str(), 0) != 0)
    return fail(slimecclSystemError, "SLIMECCL_TOPO_DUMP_FILE='{}': cannot write the topology: {}", source.dumpPath,
                strerror(errno));
  *out = TopoSummary{};
  readHwlocTopology(raw, out);
  out->source = live ? "live" : source.xmlPath;
  out->live = live;
  if (out->hwlocVersion.empty()) out->hwlocVersion = runtimeHwlocVersion();
  if (live) {
    addLiveDetails(out);
  } else if (out->verbs.empty()) {
    out->verbsNote = "the topology file lists no OpenFabrics device";
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
