// Every algorithm of every collective, as a schedule builder with one signature. Buffer sizes
// follow NCCL: count is the per-call count argument of the collective (AllGather: elements each
// rank contributes; ReduceScatter: elements each rank receives; AllReduce, Broadcast, Reduce:
// elements of the whole vector; AlltoAll: elements each rank sends to each rank).
//   AllGather      send: count                recv: nranks*count   in place: send == recv + rank*count
//   ReduceScatter  send: nranks*count         recv: count          in place: recv == send + rank*count
//   AllReduce      send: count                recv: count          in place: send == recv
//   Broadcast      send: count (root only)    recv: count          in place: send == recv (root)
//   Reduce         send: count                recv: count (root)   in place: send == recv (root)
//   AlltoAll       send: nranks*count         recv: nranks*count   (block j of send goes to rank j)
// In place, a schedule must take the rank's input from the Recv buffer (the Send buffer aliases
// it and the simulator does not model the alias). With op == avg the schedule ends with Scale
// steps on its output. Splits of a vector between ranks are made on element boundaries.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "include/slimeccl.h"
#include "src/base/util/op_kinds.h"

namespace slimeccl {

enum class Algo : unsigned char {
  Ring,                 // allgather, reducescatter, allreduce
  HalvingDoubling,      // allgather: recursive doubling (Bruck-style for non-powers of two);
                        // reducescatter: recursive halving; allreduce: Rabenseifner
  RecursiveDoubling,    // allreduce for small messages: every rank ends with the full sum in log2 N steps
  Direct,               // allgather inside one host: every rank with every rank
  Hierarchical,         // allgather: gather inside each host, ring between hosts, spread inside hosts
  Tree,                 // broadcast, reduce: binomial tree
  Chain,                // broadcast: pipelined chain
  ScatterAllGather,     // broadcast for large messages
  ReduceScatterGather,  // reduce for large messages
  Pairwise,             // alltoall
  Bruck,                // alltoall for small messages
  OneShot,              // allreduce for tiny vectors: every rank sends its input to all, reduces all N
};

const char* algoName(Algo algo);  // the SLIMECCL_ALGO spelling: "ring", "hd", "rd", "direct", ...
bool parseAlgo(const std::string& name, Algo* out);

// Which host each rank is on (host index 0..nhosts-1), for topology-aware algorithms.
struct TopologySummary {
  std::vector<int> hostOf;
  int hostCount() const;
  bool singleHost() const { return hostCount() <= 1; }
};

struct ScheduleRequest {
  Coll coll;
  Algo algo;
  size_t count;
  size_t typeBytes;
  slimecclRedOp_t op = slimecclSum;
  int root = 0;
  bool inPlace = false;
  int nranks;
  int rank;
  const TopologySummary* topology = nullptr;  // may be null: all ranks on one host
};

// Which algorithms exist for a collective (the tuner and the tests iterate over these).
std::vector<Algo> algorithmsFor(Coll coll);

// Dispatches to the builder of request.algo; an unknown pairing yields an empty schedule.
Schedule buildCollective(const ScheduleRequest& request);

// The builders.
Schedule allgatherRing(const ScheduleRequest& r);
Schedule allgatherHalvingDoubling(const ScheduleRequest& r);
Schedule allgatherDirect(const ScheduleRequest& r);
Schedule allgatherHierarchical(const ScheduleRequest& r);
Schedule reduceScatterRing(const ScheduleRequest& r);
Schedule reduceScatterHalving(const ScheduleRequest& r);
Schedule allreduceRing(const ScheduleRequest& r);
Schedule allreduceRabenseifner(const ScheduleRequest& r);
Schedule allreduceRecursiveDoubling(const ScheduleRequest& r);
Schedule allreduceOneShot(const ScheduleRequest& r);
Schedule broadcastTree(const ScheduleRequest& r);
Schedule broadcastChain(const ScheduleRequest& r);
Schedule broadcastScatterAllGather(const ScheduleRequest& r);
Schedule reduceTree(const ScheduleRequest& r);
Schedule reduceReduceScatterGather(const ScheduleRequest& r);
Schedule alltoallPairwise(const ScheduleRequest& r);
Schedule alltoallBruck(const ScheduleRequest& r);

}  // namespace slimeccl
