#include "tools/slimeccl-info/info_report.h"

#include <fmt/format.h>

#include "src/device/rdma_choice.h"
#include "src/base/error.h"
#include "src/base/param.h"
#include "topo/host_id.h"
#include "topo/interfaces.h"
#include "topo/net_selection.h"
#include "topo/nic_choice.h"
#include "topo/topology_loader.h"

namespace slimeccl::info {
namespace {

std::string versionText() {
  int code = 0;
  slimecclGetVersion(&code);
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

std::string socketInterfaceText() {
  std::string spec = envString("SLIMECCL_SOCKET_IFNAME");
  NetInterface iface;
  if (selectInterface(spec, &iface) != slimecclSuccess) {
    std::string why = threadError();
    clearThreadError();
    return why;
  }
  std::string address = iface.addr.toString();
  address = address.substr(0, address.rfind(':'));  // the port is 0: drop it
  return fmt::format("{} {} ({})", iface.name, address,
                     spec.empty() ? "SLIMECCL_SOCKET_IFNAME unset: first interface not lo, docker*, virbr*"
                                  : "SLIMECCL_SOCKET_IFNAME=" + spec);
}

void chooseLocalRankCount(const Options& options, const TopoSummary& topo, InfoReport* out) {
  int fromEnv = static_cast<int>(envInt("SLIMECCL_LOCAL_NRANKS", 0));
  if (options.localRanks > 0) {
    out->localRanks = options.localRanks;
    out->localRanksSource = "--local-ranks";
  } else if (fromEnv > 0) {
    out->localRanks = fromEnv;
    out->localRanksSource = "SLIMECCL_LOCAL_NRANKS";
  } else if (!topo.gpus.empty()) {
    out->localRanks = static_cast<int>(topo.gpus.size());
    out->localRanksSource = "one per GPU";
  } else {
    out->localRanks = 1;
    out->localRanksSource = "default";
  }
}

// Places every rank on the device topology placed the shown local rank on.
class ShownPlacement final : public NetPlacement {
 public:
  explicit ShownPlacement(const RankPlacement& placement) : placement_(placement) {}
  int homeNumaNode() const override { return placement_.numa.node; }
  slimecclResult_t listenInterface(int, NetInterface* out) const override {
    return selectInterface(envString("SLIMECCL_SOCKET_IFNAME"), out);
  }
  std::string placedDevice(int, const char*) const override { return placement_.device; }

 private:
  const RankPlacement& placement_;
};

// What a comm of that local rank would choose for its device buffers to other hosts.
slimecclResult_t gdrOf(const InfoReport& r, int localRank, GdrChoice* out) {
  const RankPlacement& placement = r.placements[localRank];
  const ShownPlacement shown(placement);
  NetContext ctx;
  ctx.rank = localRank;
  ctx.placement = &shown;
  NetModule* module = netModuleByName(r.nets.otherHosts.module);
  if (module == nullptr) clearThreadError();
  return chooseGdrForRank(placement.gpu, module, ctx,
                          GdrSettings{envString("SLIMECCL_GDR", "auto"), envString("SLIMECCL_GDR_LEVEL", "PXB")}, out);
}

}  // namespace

slimecclResult_t gatherReport(const Options& options, InfoReport* out) {
  out->version = versionText();
  out->hostIdentity = hostIdentity();
  SLIMECCL_CHECK(loadTopology(topoSourceFromEnv(), &out->topo));
  const TopoSummary& topo = out->topo;
  for (int g = 0; g < static_cast<int>(topo.gpus.size()); ++g)
    for (int n = 0; n < static_cast<int>(topo.nics.size()); ++n)
      if (topo.gpus[g].pci >= 0 && topo.nics[n].pci >= 0)
        out->gpuNicPaths.push_back({g, n, pciPath(topo.pci[topo.gpus[g].pci], topo.pci[topo.nics[n].pci])});
  NetModule* ib = nullptr;
  out->nets = liveNetPlan(topo, envString("SLIMECCL_NET"), envString("SLIMECCL_NET_PLUGIN"), -1, &ib);
  out->socketInterface = socketInterfaceText();
  chooseLocalRankCount(options, topo, out);
  std::vector<NicCandidate> candidates = nicCandidates(topo, out->nets.otherHosts.module, envString("SLIMECCL_IB_HCA"),
                                                       envString("SLIMECCL_SOCKET_IFNAME"));
  for (int r = 0; r < out->localRanks; ++r) {
    RankPlacementRequest request;
    request.localRank = r;
    request.localNranks = out->localRanks;
    out->placements.push_back(placeLocalRank(topo, candidates, request));
  }
  for (int r = 0; r < out->localRanks; ++r) {
    GdrChoice choice;
    SLIMECCL_CHECK(gdrOf(*out, r, &choice));
    out->gdr.push_back(choice);
  }
  SLIMECCL_CHECK(tunerTable(&out->tuner));
  out->gpuChoices = gpuChoiceLines();
  return slimecclSuccess;
}

}  // namespace slimeccl::info
