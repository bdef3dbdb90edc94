#include "tools/slimeccl-sim/sim_call.h"

#include <fmt/format.h>

#include "algorithms/tuner.h"
#include "src/base/util/strings.h"

namespace slimeccl::sim {

bool isReduction(Coll coll) { return coll == Coll::AllReduce || coll == Coll::ReduceScatter || coll == Coll::Reduce; }

bool isRooted(Coll coll) { return coll == Coll::Broadcast || coll == Coll::Reduce; }

TopologySummary hostLayout(int nranks, int hosts) {
  TopologySummary topology;
  topology.hostOf.reserve(static_cast<size_t>(nranks));
  for (int rank = 0; rank < nranks; ++rank) {
    topology.hostOf.push_back(static_cast<int>(static_cast<long long>(rank) * hosts / nranks));
  }
  return topology;
}

ScheduleRequest scheduleRequest(const SimCall& call, int rank, const TopologySummary& topology) {
  return ScheduleRequest{.coll = call.coll,
                         .algo = call.algo,
                         .count = call.count,
                         .typeBytes = typeSize(call.type),
                         .op = call.op,
                         .root = call.root,
                         .inPlace = false,
                         .nranks = call.nranks,
                         .rank = rank,
                         .topology = &topology};
}

std::string describeCall(const SimCall& call) {
  std::string text = fmt::format("{} {}, {} ranks on {} host{}, count {} {} ({})", collKey(call.coll),
                                 algoName(call.algo), call.nranks, call.hosts, call.hosts == 1 ? "" : "s", call.count,
                                 typeName(call.type), humanBytes(call.count * typeSize(call.type)));
  if (isReduction(call.coll)) text += fmt::format(", op {}", redOpName(call.op));
  if (isRooted(call.coll)) text += fmt::format(", root {}", call.root);
  return text;
}

}  // namespace slimeccl::sim
