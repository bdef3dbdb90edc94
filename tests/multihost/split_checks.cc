#include "split_checks.h"

#include <cstdint>
#include <string>

#include "allgather_checks.h"

namespace multihost {
namespace {

void check_split(const CommView& world, int color, int key, int expected_size, int expected_rank,
                 const std::string& label) {
  slimecclComm_t sub = nullptr;
  REQUIRE_SUCCESS(slimecclCommSplit(world.comm, color, key, &sub, nullptr), world.comm);
  if (sub == nullptr) fail(label + ": slimecclCommSplit gave no communicator for color " + std::to_string(color));
  int size = -1;
  int rank = -1;
  REQUIRE_SUCCESS(slimecclCommCount(sub, &size), sub);
  REQUIRE_SUCCESS(slimecclCommUserRank(sub, &rank), sub);
  if (size != expected_size || rank != expected_rank)
    fail(label + ": got rank " + std::to_string(rank) + " of " + std::to_string(size) + ", expected rank " +
         std::to_string(expected_rank) + " of " + std::to_string(expected_size));

  CommView view{sub, rank, size};
  constexpr size_t kMiB = size_t{1} << 20;
  check_allgather<int8_t>(view, kMiB + 3, false);
  check_allgather<double>(view, 1000, true);
  REQUIRE_SUCCESS(slimecclCommFinalize(sub), sub);
  REQUIRE_SUCCESS(slimecclCommDestroy(sub), nullptr);
}

}  // namespace

void run_split_by_host(const CommView& world, int ranks_per_host) {
  check_split(world, world.rank / ranks_per_host, world.rank, ranks_per_host, world.rank % ranks_per_host,
              "split by host");
}

void run_split_across_hosts(const CommView& world, int ranks_per_host) {
  const int hosts = world.nranks / ranks_per_host;
  const int host = world.rank / ranks_per_host;
  check_split(world, world.rank % ranks_per_host, world.nranks - world.rank, hosts, hosts - 1 - host,
              "split across hosts");
}

}  // namespace multihost
