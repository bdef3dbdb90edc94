#include "net/net.h"
#include "src/base/param.h"

namespace slimeccl {
namespace {

// No topology: memory anywhere, SLIMECCL_SOCKET_IFNAME or the default interface rule, no device.
class NoPreference final : public NetPlacement {
 public:
  int homeNumaNode() const override { return -1; }
  slimecclResult_t listenInterface(int, NetInterface* out) const override {
    return selectInterface(envString("SLIMECCL_SOCKET_IFNAME"), out);
  }
  std::string placedDevice(int, const char*) const override { return {}; }
};

}  // namespace

const NetPlacement& placementOf(const NetContext& ctx) {
  static const NoPreference none;
  return ctx.placement != nullptr ? *ctx.placement : none;
}

}  // namespace slimeccl
