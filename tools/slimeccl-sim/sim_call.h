// One collective call to simulate, and the per-rank schedule requests it stands for.
#pragma once

#include <cstddef>
#include <string>

#include "algorithms/catalog.h"
#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl::sim {

struct SimCall {
  Coll coll = Coll::AllGather;
  Algo algo = Algo::Ring;
  int nranks = 1;
  size_t count = 0;  // the call's count argument, as algorithms/catalog.h defines it per collective
  slimecclDataType_t type = slimecclFloat32;
  slimecclRedOp_t op = slimecclSum;
  int root = 0;
  int hosts = 1;
};

bool isReduction(Coll coll);
bool isRooted(Coll coll);

// Ranks on `hosts` hosts, consecutive ranks together, host sizes differing by at most one.
TopologySummary hostLayout(int nranks, int hosts);

// Rank `rank`'s request for an out-of-place call.
ScheduleRequest scheduleRequest(const SimCall& call, int rank, const TopologySummary& topology);

// "allgather ring, 8 ranks on 1 host, count 256 float (1 KiB)" and, for reductions and rooted
// collectives, the op and root.
std::string describeCall(const SimCall& call);

}  // namespace slimeccl::sim
