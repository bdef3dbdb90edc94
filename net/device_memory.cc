#include <fmt/format.h>

#include "net/net.h"

namespace slimeccl {

const char* deviceMemoryRouteName(DeviceMemoryRoute route) {
  switch (route) {
    case DeviceMemoryRoute::None: return "none";
    case DeviceMemoryRoute::Dmabuf: return "dmabuf";
    case DeviceMemoryRoute::PeerMemory: return "peer memory";
  }
  return "none";
}

DeviceMemorySupport NetModule::deviceMemorySupport(const NetContext&) {
  return DeviceMemorySupport{"", false, false, fmt::format("the '{}' module moves bytes with the CPU", name())};
}

}  // namespace slimeccl
