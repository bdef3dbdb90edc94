#include "tools/slimeccl-info/json_report.h"

#include "tools/slimeccl-info/json_writer.h"

namespace slimeccl::info {
namespace {

// -1 means unknown in the summary; JSON says null.
void optionalInt(JsonWriter& w, const char* name, int64_t value) {
  w.key(name);
  if (value < 0)
    w.null();
  else
    w.value(value);
}

void optionalPci(JsonWriter& w, const TopoSummary& topo, int pci) {
  w.key("pci_bus_id");
  if (pci < 0)
    w.null();
  else
    w.value(topo.pci[pci].busId);
}

void writeHost(JsonWriter& w, const InfoReport& r) {
  const TopoSummary& topo = r.topo;
  w.key("host").beginObject();
  w.field("identity", r.hostIdentity);
  w.field("hostname", topo.hostName);
  w.endObject();
  w.key("topology").beginObject();
  w.field("source", topo.source).field("live", topo.live).field("hwloc_version", topo.hwlocVersion);
  w.field("packages", static_cast<int>(topo.packages.size())).field("cores", topo.cores);
  w.field("hardware_threads", topo.hardwareThreads);
  w.endObject();
}

void writeNuma(JsonWriter& w, const TopoSummary& topo) {
  w.key("numa_nodes").beginArray();
  for (const NumaNode& node : topo.numaNodes) {
    w.beginObject().field("os_index", node.osIndex);
    optionalInt(w, "package", node.package);
    w.field("cpus", cpuRanges(node.cpus)).field("cpu_count", static_cast<int>(node.cpus.size()));
    w.field("memory_bytes", static_cast<uint64_t>(node.memoryBytes)).endObject();
  }
  w.endArray();
}

void writeVerbs(JsonWriter& w, const TopoSummary& topo, const std::string& name) {
  const VerbsDevice* device = findVerbsDevice(topo, name);
  w.beginObject().field("device", name);
  if (device != nullptr) {
    w.field("node_guid", device->nodeGuid).key("ports").beginArray();
    for (const VerbsPort& port : device->ports) {
      w.beginObject().field("port", port.number).field("state", verbsPortStateName(port.state));
      w.field("link_layer", port.linkLayer).field("gbps", port.gbps).field("lid", port.lid);
      w.field("netdev", port.netdev);
      w.key("gids").beginArray();
      for (const VerbsGid& gid : port.gids)
        w.beginObject().field("index", gid.index).field("gid", gid.gid).field("type", gid.type).endObject();
      w.endArray().endObject();
    }
    w.endArray();
  }
  w.endObject();
}

void writeNics(JsonWriter& w, const TopoSummary& topo) {
  w.key("nics").beginArray();
  for (const Nic& nic : topo.nics) {
    w.beginObject().field("name", nic.name);
    optionalPci(w, topo, nic.pci);
    optionalInt(w, "numa_node", pciNumaNode(topo, nic.pci));
    w.field("speed_gbps", nicSpeedGbps(topo, nic));
    w.field("adapter", nic.pci >= 0 ? pciDescription(topo.pci[nic.pci]) : "");
    w.key("interfaces").beginArray();
    for (const Netdev& netdev : nic.netdevs)
      w.beginObject().field("name", netdev.name).field("usable", netdev.usable).endObject();
    w.endArray().key("verbs").beginArray();
    for (const std::string& name : nic.verbs) writeVerbs(w, topo, name);
    w.endArray().endObject();
  }
  w.endArray();
  w.field("verbs_note", topo.verbsNote);
}

void writeGpus(JsonWriter& w, const InfoReport& r) {
  const TopoSummary& topo = r.topo;
  w.key("gpus").beginArray();
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    const Gpu& gpu = topo.gpus[g];
    w.beginObject().field("index", static_cast<int>(g));
    optionalPci(w, topo, gpu.pci);
    optionalInt(w, "numa_node", pciNumaNode(topo, gpu.pci));
    w.field("device", gpu.osName).field("model", gpu.model).endObject();
  }
  w.endArray();
  w.key("gpu_nic_paths").beginArray();
  for (const GpuNicPath& p : r.gpuNicPaths)
    w.beginObject()
        .field("gpu", p.gpu)
        .field("nic", topo.nics[p.nic].name)
        .field("class", pathClassName(p.path.pathClass))
        .field("hops", p.path.hops)
        .endObject();
  w.endArray();
}

void writeNets(JsonWriter& w, const InfoReport& r) {
  w.key("net").beginObject();
  w.key("same_host").beginObject();
  w.field("module", r.nets.sameHost.module).field("reason", r.nets.sameHost.reason).endObject();
  w.key("other_hosts").beginObject();
  w.field("module", r.nets.otherHosts.module).field("reason", r.nets.otherHosts.reason).endObject();
  w.field("socket_interface", r.socketInterface);
  w.endObject();
}

void writeRanks(JsonWriter& w, const InfoReport& r) {
  w.key("local_ranks").beginObject();
  w.field("count", r.localRanks).field("count_from", r.localRanksSource);
  w.field("nic_net", r.nets.otherHosts.module).key("ranks").beginArray();
  for (size_t i = 0; i < r.placements.size(); ++i) {
    const RankPlacement& p = r.placements[i];
    w.beginObject().field("local_rank", static_cast<int>(i));
    optionalInt(w, "gpu", p.gpu);
    optionalInt(w, "numa_node", p.numa.node);
    w.field("numa_reason", p.numa.reason).key("nic");
    if (p.nic >= 0)
      w.value(r.topo.nics[p.nic].name);
    else
      w.null();
    w.field("device", p.device).field("path_class", pathClassName(p.nicChoice.pathClass));
    w.field("hops", p.nicChoice.hops).field("equally_close", p.nicChoice.tied);
    w.field("nic_reason", p.nicChoice.reason);
    w.field("gpu_direct_rdma", deviceMemoryRouteName(r.gdr[i].route)).field("gpu_direct_rdma_reason", r.gdr[i].reason);
    w.endObject();
  }
  w.endArray().endObject();
}

void writeTuner(JsonWriter& w, const std::vector<TunerLine>& tuner) {
  w.key("tuner").beginArray();
  for (const TunerLine& line : tuner)
    w.beginObject()
        .field("collective", line.collective)
        .field("bytes", line.sizes)
        .field("ranks", line.ranks)
        .field("topology", line.topology)
        .field("algorithm", line.algorithm)
        .field("chunk", line.chunk)
        .field("forced", line.forced)
        .endObject();
  w.endArray();
}

void writeGpuChoices(JsonWriter& w, const std::vector<GpuChoiceLine>& choices) {
  w.key("gpu_choices").beginArray();
  for (const GpuChoiceLine& line : choices)
    w.beginObject()
        .field("choice", line.choice)
        .field("collective", line.collective)
        .field("ranks", line.ranks)
        .field("bytes", line.sizes)
        .field("value", line.value)
        .endObject();
  w.endArray();
}

}  // namespace

std::string jsonReport(const InfoReport& report) {
  JsonWriter w;
  w.beginObject().field("version", report.version);
  writeHost(w, report);
  writeNuma(w, report.topo);
  writeNics(w, report.topo);
  writeGpus(w, report);
  writeNets(w, report);
  writeRanks(w, report);
  writeTuner(w, report.tuner);
  writeGpuChoices(w, report.gpuChoices);
  w.endObject();
  return w.text();
}

}  // namespace slimeccl::info
