#include "split_checks.h"

#include <cstdint>
#include <string>

#include "allgather_checks.h"

namespace multihost {
namespace {

void checkSplit(const CommView& world, int color, int key, int expectedSize, int expectedRank,
                const std::string& label) {
  slimecclComm_t sub = nullptr;
  REQUIRE_SUCCESS(slimecclCommSplit(world.comm, color, key, &sub, nullptr), world.comm);
  if (sub == nullptr) fail(label + ": slimecclCommSplit gave no communicator for color " + std::to_string(color));
  int size = -1;
  int rank = -1;
  REQUIRE_SUCCESS(slimecclCommCount(sub, &size), sub);
  REQUIRE_SUCCESS(slimecclCommUserRank(sub, &rank), sub);
  if (size != expectedSize || rank != expectedRank)
    fail(label + ": got rank " + std::to_string(rank) + " of " + std::to_string(size) + ", expected rank " +
         std::to_string(expectedRank) + " of " + std::to_string(expectedSize));

  CommView view{sub, rank, size};
  constexpr size_t kMiB = size_t{1} << 20;
  checkAllgather<int8_t>(view, kMiB + 3, false);
  checkAllgather<double>(view, 1000, true);
  REQUIRE_SUCCESS(slimecclCommFinalize(sub), sub);
  REQUIRE_SUCCESS(slimecclCommDestroy(sub), nullptr);
}

}  // namespace

void runSplitByHost(const CommView& world, int ranksPerHost) {
  checkSplit(world, world.rank / ranksPerHost, world.rank, ranksPerHost, world.rank % ranksPerHost, "split by host");
}

void runSplitAcrossHosts(const CommView& world, int ranksPerHost) {
  const int hosts = world.nranks / ranksPerHost;
  const int host = world.rank / ranksPerHost;
  checkSplit(world, world.rank % ranksPerHost, world.nranks - world.rank, hosts, hosts - 1 - host,
             "split across hosts");
}

}  // namespace multihost
