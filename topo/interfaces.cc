#include "topo/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>

#include "src/base/error.h"
#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool isDefaultExcluded(const std::string& name) {
  return name == "lo" || startsWith(name, "docker") || startsWith(name, "virbr");
}

}  // namespace

std::vector<NetInterface> listInterfaces() {
  std::vector<NetInterface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || !(it->ifa_flags & IFF_UP)) continue;
    int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    NetInterface iface;
    iface.name = it->ifa_name;
    if (family == AF_INET) {
      memcpy(&iface.addr.u.v4, it->ifa_addr, sizeof(sockaddr_in));
    } else {
      memcpy(&iface.addr.u.v6, it->ifa_addr, sizeof(sockaddr_in6));
      if (IN6_IS_ADDR_LINKLOCAL(&iface.addr.u.v6.sin6_addr)) continue;
    }
    iface.addr.setPort(0);
    out.push_back(iface);
  }
  freeifaddrs(list);
  // IPv4 first: simpler to read in logs and what users of NCCL expect by default.
  std::stable_sort(out.begin(), out.end(),
                   [](const NetInterface& a, const NetInterface& b) { return a.addr.family() < b.addr.family(); });
  return out;
}

std::vector<NetInterface> matchInterfaces(const std::vector<NetInterface>& all, const std::string& spec) {
  std::vector<NetInterface> out;
  if (spec.empty()) {
    for (const auto& iface : all)
      if (!isDefaultExcluded(iface.name)) out.push_back(iface);
    if (out.empty())
      for (const auto& iface : all)
        if (iface.name == "lo") out.push_back(iface);
    return out;
  }
  bool exclude = spec[0] == '^';
  std::string rest = exclude ? spec.substr(1) : spec;
  bool exact = !rest.empty() && rest[0] == '=';
  if (exact) rest = rest.substr(1);
  std::vector<std::string> names = splitList(rest, ',');
  for (const auto& iface : all) {
    bool hit = false;
    for (const auto& name : names) hit |= exact ? iface.name == name : startsWith(iface.name, name);
    if (hit != exclude) out.push_back(iface);
  }
  return out;
}

slimecclResult_t selectInterface(const std::string& spec, NetInterface* out) {
  std::vector<NetInterface> all = listInterfaces();
  std::vector<NetInterface> matched = matchInterfaces(all, spec);
  if (matched.empty()) {
    // An interface with several addresses (IPv4 and IPv6) is named once.
    std::vector<std::string> seen;
    std::string names;
    for (const auto& iface : all) {
      if (std::find(seen.begin(), seen.end(), iface.name) != seen.end()) continue;
      seen.push_back(iface.name);
      names += (names.empty() ? "" : ", ") + iface.name;
    }
    return fail(slimecclInvalidArgument, "SLIMECCL_SOCKET_IFNAME='{}' matches no usable interface (interfaces up: {})",
                spec, names.empty() ? "none" : names);
  }
  *out = matched.front();
  return slimecclSuccess;
}

}  // namespace slimeccl
