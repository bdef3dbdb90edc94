#include "tools/slimeccl-info/text_report.h"

#include <fmt/format.h>

#include <sstream>

#include "src/base/util/strings.h"

namespace slimeccl::info {
namespace {

std::string numaText(int node) { return node >= 0 ? std::to_string(node) : "-"; }

std::string speedText(double gbps) {
  if (gbps <= 0) return "-";
  return gbps < 1 ? fmt::format("{:g} Mb/s", gbps * 1000) : fmt::format("{:g} Gb/s", gbps);
}

std::string pciText(const TopoSummary& topo, int pci) { return pci >= 0 ? topo.pci[pci].busId : "(not on PCI)"; }

std::string plural(size_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

// Column padding leaves spaces at the end of lines whose last cells are empty.
std::string withoutTrailingSpaces(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + '\n';
  }
  return out;
}

void hostSection(const InfoReport& r, std::string& out) {
  const TopoSummary& topo = r.topo;
  out += fmt::format("slimeccl {}: topology and choices\n\nHost\n", r.version);
  out += fmt::format("  {:<14}{}\n", "identity", r.hostIdentity);
  if (topo.live)
    out += fmt::format("  {:<14}this machine ({}, hwloc {})\n", "topology", topo.hostName, topo.hwlocVersion);
  else
    out +=
        fmt::format("  {:<14}file {} (host {}, hwloc {})\n", "topology", topo.source, topo.hostName, topo.hwlocVersion);
  out += fmt::format("  {:<14}{}, {}, {}\n", "CPUs", plural(topo.packages.size(), "package", "packages"),
                     plural(topo.cores, "core", "cores"),
                     plural(topo.hardwareThreads, "hardware thread", "hardware threads"));
}

void numaSection(const TopoSummary& topo, std::string& out) {
  out += "\nNUMA nodes\n";
  if (topo.numaNodes.empty()) {
    out += "  none\n";
    return;
  }
  out += fmt::format("  {:<6}{:<9}{:<18}{}\n", "node", "package", "cpus", "memory");
  for (const NumaNode& node : topo.numaNodes)
    out += fmt::format("  {:<6}{:<9}{:<18}{}\n", node.osIndex, numaText(node.package), cpuRanges(node.cpus),
                       humanBytes(node.memoryBytes));
}

void verbsPortLines(const TopoSummary& topo, const std::string& name, std::string& out) {
  const VerbsDevice* device = findVerbsDevice(topo, name);
  if (device == nullptr) return;
  if (device->ports.empty()) out += fmt::format("      verbs {}: no port information\n", name);
  for (const VerbsPort& port : device->ports) {
    std::string line = fmt::format("      verbs {} port {}: {}", name, port.number, verbsPortStateName(port.state));
    if (!port.linkLayer.empty()) line += ", " + port.linkLayer;
    if (port.gbps > 0) line += ", " + speedText(port.gbps);
    line += fmt::format(", lid 0x{:x}", port.lid);
    if (!port.netdev.empty()) line += ", netdev " + port.netdev;
    out += line + "\n";
    for (const VerbsGid& gid : port.gids)
      out += fmt::format("        gid {:<3}{}{}\n", gid.index, gid.gid, gid.type.empty() ? "" : "  " + gid.type);
  }
}

void nicSection(const TopoSummary& topo, std::string& out) {
  out += "\nNICs\n";
  if (topo.nics.empty()) {
    out += "  none\n";
  } else {
    out += fmt::format("  {:<14}{:<15}{:<6}{:<11}{:<22}{}\n", "name", "PCI bus id", "NUMA", "speed", "interfaces",
                       "adapter");
  }
  for (const Nic& nic : topo.nics) {
    std::string interfaces;
    for (const Netdev& netdev : nic.netdevs)
      interfaces += (interfaces.empty() ? "" : ",") + netdev.name + (netdev.usable ? "" : " (no IP)");
    std::string adapter = nic.pci >= 0 ? pciDescription(topo.pci[nic.pci]) : "";
    out += fmt::format("  {:<14}{:<15}{:<6}{:<11}{:<22}{}\n", nic.name, pciText(topo, nic.pci),
                       numaText(pciNumaNode(topo, nic.pci)), speedText(nicSpeedGbps(topo, nic)),
                       interfaces.empty() ? "-" : interfaces, adapter);
    for (const std::string& verbs : nic.verbs) verbsPortLines(topo, verbs, out);
  }
  if (topo.verbs.empty())
    out += fmt::format("  verbs devices: none ({})\n", topo.verbsNote);
  else if (!topo.verbsNote.empty())
    out += fmt::format("  verbs devices: {}\n", topo.verbsNote);
}

void gpuSection(const InfoReport& r, std::string& out) {
  const TopoSummary& topo = r.topo;
  out += "\nGPUs\n";
  if (topo.gpus.empty()) {
    out += "  none\n";
    return;
  }
  out += fmt::format("  {:<5}{:<15}{:<6}{:<8}{}\n", "gpu", "PCI bus id", "NUMA", "device", "model");
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    const Gpu& gpu = topo.gpus[g];
    out += fmt::format("  {:<5}{:<15}{:<6}{:<8}{}\n", g, pciText(topo, gpu.pci), numaText(pciNumaNode(topo, gpu.pci)),
                       gpu.osName.empty() ? "-" : gpu.osName, gpu.model);
  }
  if (r.gpuNicPaths.empty()) return;
  out += "\nPCI paths from GPU to NIC (class, hops; PIX < PXB < PHB < NODE < SYS)\n";
  out += fmt::format("  {:<6}", "");
  for (const Nic& nic : topo.nics) out += fmt::format("{:<14}", nic.name);
  out += "\n";
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    out += fmt::format("  {:<6}", fmt::format("GPU {}", g));
    for (size_t n = 0; n < topo.nics.size(); ++n) {
      std::string cell = "-";
      for (const GpuNicPath& p : r.gpuNicPaths)
        if (p.gpu == static_cast<int>(g) && p.nic == static_cast<int>(n))
          cell = fmt::format("{} {}", pathClassName(p.path.pathClass), p.path.hops);
      out += fmt::format("{:<14}", cell);
    }
    out += "\n";
  }
}

void netSection(const InfoReport& r, std::string& out) {
  out += "\nNet module per peer class\n";
  out += fmt::format("  {:<14}{:<9}{}\n", "same host", r.nets.sameHost.module, r.nets.sameHost.reason);
  out += fmt::format("  {:<14}{:<9}{}\n", "other hosts", r.nets.otherHosts.module, r.nets.otherHosts.reason);
  out += fmt::format("  {:<14}{}\n", "interface", r.socketInterface);
}

void rankSection(const InfoReport& r, std::string& out) {
  const TopoSummary& topo = r.topo;
  out += fmt::format("\nLocal ranks ({}, {}; NICs for '{}', ranks taken as unbound)\n", r.localRanks,
                     r.localRanksSource, r.nets.otherHosts.module);
  out += fmt::format("  {:<6}{:<5}{:<6}{:<14}{:<14}{}\n", "rank", "GPU", "NUMA", "NIC", "device", "why");
  for (size_t i = 0; i < r.placements.size(); ++i) {
    const RankPlacement& p = r.placements[i];
    out += fmt::format("  {:<6}{:<5}{:<6}{:<14}{:<14}NIC: {}; NUMA: {}\n", i, p.gpu >= 0 ? std::to_string(p.gpu) : "-",
                       numaText(p.numa.node), p.nic >= 0 ? topo.nics[p.nic].name : "-",
                       p.device.empty() ? "-" : p.device, p.nicChoice.reason, p.numa.reason);
  }
  out += "  device buffers to other hosts (SLIMECCL_GDR, SLIMECCL_GDR_LEVEL):\n";
  for (size_t i = 0; i < r.gdr.size(); ++i) out += fmt::format("  {:<6}{}\n", i, r.gdr[i].reason);
}

void tunerSection(const std::vector<TunerLine>& tuner, std::string& out) {
  out += "\nTuner table (first match wins; SLIMECCL_ALGO overrides come first)\n";
  out += fmt::format("  {:<15}{:<24}{:<9}{:<15}{:<11}{}\n", "collective", "bytes", "ranks", "topology", "algorithm",
                     "chunk");
  for (const TunerLine& line : tuner)
    out += fmt::format("  {:<15}{:<24}{:<9}{:<15}{:<11}{}{}\n", line.collective, line.sizes, line.ranks, line.topology,
                       line.algorithm, line.chunk, line.forced ? "  (SLIMECCL_ALGO)" : "");
}

void gpuChoiceSection(const std::vector<GpuChoiceLine>& choices, std::string& out) {
  out +=
      "\nGPU path choices (first match wins; SLIMECCL_GPU_SM_COPY_BYTES, SLIMECCL_GPU_REDUCE_ALGO, "
      "SLIMECCL_GPU_BROADCAST_ALGO and SLIMECCL_MAX_CTAS override)\n";
  out += fmt::format("  {:<21}{:<15}{:<9}{:<24}{}\n", "choice", "collective", "ranks", "bytes", "value");
  for (const GpuChoiceLine& line : choices)
    out +=
        fmt::format("  {:<21}{:<15}{:<9}{:<24}{}\n", line.choice, line.collective, line.ranks, line.sizes, line.value);
}

}  // namespace

std::string textReport(const InfoReport& report) {
  std::string out;
  hostSection(report, out);
  numaSection(report.topo, out);
  nicSection(report.topo, out);
  gpuSection(report, out);
  netSection(report, out);
  rankSection(report, out);
  tunerSection(report.tuner, out);
  gpuChoiceSection(report.gpuChoices, out);
  return withoutTrailingSpaces(out);
}

}  // namespace slimeccl::info
