#include "src/link/system_net_placement.h"

#include "src/base/error.h"
#include "src/base/log.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

class SystemNetPlacement final : public NetPlacement {
 public:
  int homeNumaNode() const override { return homeNumaNodeToUse(); }

  slimecclResult_t listenInterface(int rank, NetInterface* out) const override {
    return slimeccl::listenInterface(rank, out);
  }

  std::string placedDevice(int rank, const char* moduleName) const override {
    int localRank = 0, localNranks = 1;
    thisLocalRank(&localRank, &localNranks);
    RankPlacement placement;
    if (placeThisRank(localRank, localNranks, moduleName, &placement) != slimecclSuccess) {
      clearThreadError();
      return {};
    }
    if (!placement.device.empty())
      SLIMECCL_INFO(kLogNet, rank, "{}: topology places local rank {} of {} on {}", moduleName, localRank, localNranks,
                    placement.device);
    return placement.device;
  }
};

}  // namespace

const NetPlacement& systemNetPlacement() {
  static const SystemNetPlacement placement;
  return placement;
}

}  // namespace slimeccl
