#include "topo/host_id.h"

#include <unistd.h>

#include <fstream>

#include "src/param.h"

namespace slimeccl {

std::string hostIdentity() {
  std::string forced = envString("SLIMECCL_HOSTID");
  if (!forced.empty()) return forced;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string bootId;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, bootId);
  return std::string(host) + ":" + bootId;
}

}  // namespace slimeccl
