// Network interfaces and SLIMECCL_SOCKET_IFNAME: which addresses bootstrap and sockets use.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

struct NetInterface {
  std::string name;
  SockAddr addr;  // port 0
};

// Interfaces that are up and carry an IPv4/IPv6 address (link-local IPv6 skipped).
std::vector<NetInterface> listInterfaces();

// Applies a SLIMECCL_SOCKET_IFNAME value: comma-separated name prefixes; a leading '^' turns the
// list into exclusions, a leading '=' asks for exact names. An empty spec picks the first
// interface that is not loopback or a container bridge, else loopback.
std::vector<NetInterface> matchInterfaces(const std::vector<NetInterface>& all, const std::string& spec);

// The interface to use; InvalidArgument with a sentence listing what exists when nothing matches.
slimecclResult_t selectInterface(const std::string& spec, NetInterface* out);

}  // namespace slimeccl
