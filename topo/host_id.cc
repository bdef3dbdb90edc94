#include "topo/host_id.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "src/base/param.h"

namespace slimeccl {

std::string hostIdentity() {
  std::string forced = envString("SLIMECCL_HOSTID");
  if (!forced.empty()) return forced;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string bootId;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, bootId);
  // Shared memory connections meet on abstract Unix sockets, which live in a network namespace:
  // ranks in different namespaces of one kernel cannot use them, so they are different hosts.
  struct stat netns;
  std::string ns = stat("/proc/self/ns/net", &netns) == 0 ? ":netns" + std::to_string(netns.st_ino) : "";
  return std::string(host) + ":" + bootId + ns;
}

}  // namespace slimeccl
