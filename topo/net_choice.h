// Which net module serves each class of peer: ranks on this host, and ranks on other hosts.
// Same host -> shm; other hosts -> ib when a verbs port is usable and the ib module exists, else
// socket. SLIMECCL_NET forces one module for every peer; SLIMECCL_NET_PLUGIN names the module
// for other hosts; SLIMECCL_IB_HCA limits which verbs ports count as usable.
#pragma once

#include <string>
#include <vector>

#include "topo/hca_filter.h"
#include "topo/topology.h"

namespace slimeccl {

struct NetRequest {
  std::string forcedNet;  // SLIMECCL_NET or the config's netName ("" = by topology)
  std::string netPlugin;  // SLIMECCL_NET_PLUGIN
  std::string ibHca;      // SLIMECCL_IB_HCA
  bool ibModuleAvailable = false;
};

struct NetChoice {
  std::string module;  // "shm", "socket", "ib" or a plugin name
  std::string reason;  // a sentence for logs and slimeccl-info
};

struct NetPlan {
  NetChoice sameHost;
  NetChoice otherHosts;
};

struct VerbsPortRef {
  std::string device;
  int port = 1;
};

// ACTIVE ports that the filter accepts, in device then port order.
std::vector<VerbsPortRef> usableVerbsPorts(const TopoSummary& topo, const HcaFilter& filter);
NetPlan chooseNets(const TopoSummary& topo, const NetRequest& request);

}  // namespace slimeccl
