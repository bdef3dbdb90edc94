#include "rank_environment.h"

#include <array>
#include <string_view>
#include <unistd.h>

#include <cstdlib>

namespace slimeccl::run {
namespace {

constexpr std::array<std::string_view, 6> kRankVariables = {
    "SLIMECCL_RANK",         "SLIMECCL_NRANKS",  "SLIMECCL_LOCAL_RANK",
    "SLIMECCL_LOCAL_NRANKS", "SLIMECCL_COMM_ID", "SLIMECCL_COMM_SECRET",
};

bool setsRankVariable(std::string_view entry) {
  for (std::string_view name : kRankVariables) {
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> rankEnvironment(const LaunchOptions& options, const Rendezvous& rendezvous, int localRank) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!setsRankVariable(*entry)) environment.emplace_back(*entry);
  }
  environment.push_back("SLIMECCL_RANK=" + std::to_string(options.globalRank(localRank)));
  environment.push_back("SLIMECCL_NRANKS=" + std::to_string(options.totalRanks()));
  environment.push_back("SLIMECCL_LOCAL_RANK=" + std::to_string(localRank));
  environment.push_back("SLIMECCL_LOCAL_NRANKS=" + std::to_string(options.localRanks));
  environment.push_back("SLIMECCL_COMM_ID=" + rendezvous.commId);
  environment.push_back("SLIMECCL_COMM_SECRET=" + rendezvous.secret);
  // Every rank of a single-node job is on this host: keep bootstrap and sockets on loopback
  // unless the caller chose an interface.
  if (options.nodes == 1 && !options.master && getenv("SLIMECCL_SOCKET_IFNAME") == nullptr)
    environment.push_back("SLIMECCL_SOCKET_IFNAME=lo");
  return environment;
}

}  // namespace slimeccl::run
