// One rank of the two-host test: run under slimeccl-run, it checks AllGather, grouped Send/Recv
// and CommSplit over a communicator whose ranks sit on several hosts, and exits 1 on the first
// wrong element or failed call.
#include <cstdio>

#include "allgather_checks.h"
#include "check_support.h"
#include "p2p_checks.h"
#include "split_checks.h"

int main() {
  using namespace multihost;
  const LaunchLayout layout = layoutFromEnv();

  // With SLIMECCL_COMM_ID set, GetUniqueId returns the id every rank derives from it.
  slimecclUniqueId id;
  REQUIRE_SUCCESS(slimecclGetUniqueId(&id), nullptr);
  slimecclComm_t comm = nullptr;
  REQUIRE_SUCCESS(slimecclCommInitRank(&comm, layout.nranks, id, layout.rank), nullptr);
  const CommView world{comm, layout.rank, layout.nranks};

  runAllgatherSweep(world);
  runRingExchange(world);
  runAllPairsExchange(world);
  runSplitByHost(world, layout.ranksPerHost);
  runSplitAcrossHosts(world, layout.ranksPerHost);

  REQUIRE_SUCCESS(slimecclCommFinalize(comm), comm);
  REQUIRE_SUCCESS(slimecclCommDestroy(comm), nullptr);
  std::printf("multihost_check rank %d: OK\n", layout.rank);
  return 0;
}
