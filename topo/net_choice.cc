#include "topo/net_choice.h"

#include <fmt/format.h>

namespace slimeccl {
namespace {

std::string portList(const std::vector<VerbsPortRef>& ports) {
  std::string out;
  for (const VerbsPortRef& p : ports) out += fmt::format("{}{}:{}", out.empty() ? "" : ", ", p.device, p.port);
  return out;
}

// Why no verbs port is usable, naming what exists.
std::string noUsablePortReason(const TopoSummary& topo, const std::string& ibHca) {
  if (topo.verbs.empty())
    return topo.verbsNote.empty() ? "no verbs device" : fmt::format("no verbs device: {}", topo.verbsNote);
  std::vector<VerbsPortRef> active = usableVerbsPorts(topo, HcaFilter{});
  if (!active.empty())
    return fmt::format("SLIMECCL_IB_HCA='{}' accepts none of the ACTIVE verbs ports ({})", ibHca, portList(active));
  std::string states;
  for (const VerbsDevice& device : topo.verbs)
    for (const VerbsPort& port : device.ports)
      states += fmt::format("{}{}:{} {}", states.empty() ? "" : ", ", device.name, port.number,
                            verbsPortStateName(port.state));
  return fmt::format("no verbs port is ACTIVE ({})", states.empty() ? "no ports" : states);
}

}  // namespace

std::vector<VerbsPortRef> usableVerbsPorts(const TopoSummary& topo, const HcaFilter& filter) {
  std::vector<VerbsPortRef> out;
  for (const VerbsDevice& device : topo.verbs)
    for (const VerbsPort& port : device.ports)
      if (port.state == kVerbsPortActive && hcaFilterAccepts(filter, device.name, port.number))
        out.push_back({device.name, port.number});
  return out;
}

NetPlan chooseNets(const TopoSummary& topo, const NetRequest& request) {
  NetPlan plan;
  if (!request.forcedNet.empty()) {
    plan.sameHost = {request.forcedNet, "SLIMECCL_NET (or the config's netName) forces one module for every peer"};
    plan.otherHosts = plan.sameHost;
    return plan;
  }
  plan.sameHost = {"shm", "ranks with the same host identity share memory"};
  if (!request.netPlugin.empty()) {
    plan.otherHosts = {request.netPlugin, "SLIMECCL_NET_PLUGIN names the module for peers on other hosts"};
    return plan;
  }
  std::vector<VerbsPortRef> usable = usableVerbsPorts(topo, parseHcaFilter(request.ibHca));
  if (usable.empty()) {
    plan.otherHosts = {"socket", noUsablePortReason(topo, request.ibHca)};
  } else if (!request.ibModuleAvailable) {
    plan.otherHosts = {"socket",
                       fmt::format("verbs ports {} are ACTIVE but this library has no ib module", portList(usable))};
  } else {
    plan.otherHosts = {"ib", fmt::format("verbs ports ACTIVE: {}", portList(usable))};
  }
  return plan;
}

}  // namespace slimeccl
