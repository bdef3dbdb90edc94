#include "algorithms/catalog.h"

#include <set>

namespace slimeccl {
namespace {

struct AlgoName {
  Algo algo;
  const char* name;
};
constexpr AlgoName kNames[] = {
    {Algo::Ring, "ring"},
    {Algo::HalvingDoubling, "hd"},
    {Algo::RecursiveDoubling, "rd"},
    {Algo::Direct, "direct"},
    {Algo::Hierarchical, "hier"},
    {Algo::Tree, "tree"},
    {Algo::Chain, "chain"},
    {Algo::ScatterAllGather, "scatter_ag"},
    {Algo::ReduceScatterGather, "rs_gather"},
    {Algo::Pairwise, "pairwise"},
    {Algo::Bruck, "bruck"},
    {Algo::OneShot, "oneshot"},
};

}  // namespace

const char* algoName(Algo algo) {
  for (const auto& n : kNames)
    if (n.algo == algo) return n.name;
  return "?";
}

bool parseAlgo(const std::string& name, Algo* out) {
  for (const auto& n : kNames)
    if (name == n.name) {
      *out = n.algo;
      return true;
    }
  return false;
}

int TopologySummary::hostCount() const {
  std::set<int> hosts(hostOf.begin(), hostOf.end());
  return static_cast<int>(hosts.size());
}

std::vector<Algo> algorithmsFor(Coll coll) {
  switch (coll) {
    case Coll::AllGather: return {Algo::Ring, Algo::HalvingDoubling, Algo::Direct, Algo::Hierarchical};
    case Coll::ReduceScatter: return {Algo::Ring, Algo::HalvingDoubling};
    case Coll::AllReduce: return {Algo::Ring, Algo::HalvingDoubling, Algo::RecursiveDoubling, Algo::OneShot};
    case Coll::Broadcast: return {Algo::Tree, Algo::Chain, Algo::ScatterAllGather};
    case Coll::Reduce: return {Algo::Tree, Algo::ReduceScatterGather};
    case Coll::AlltoAll: return {Algo::Pairwise, Algo::Bruck};
    default: return {};
  }
}

Schedule buildCollective(const ScheduleRequest& r) {
  switch (r.coll) {
    case Coll::AllGather:
      if (r.algo == Algo::Ring) return allgatherRing(r);
      if (r.algo == Algo::HalvingDoubling) return allgatherHalvingDoubling(r);
      if (r.algo == Algo::Direct) return allgatherDirect(r);
      if (r.algo == Algo::Hierarchical) return allgatherHierarchical(r);
      break;
    case Coll::ReduceScatter:
      if (r.algo == Algo::Ring) return reduceScatterRing(r);
      if (r.algo == Algo::HalvingDoubling) return reduceScatterHalving(r);
      break;
    case Coll::AllReduce:
      if (r.algo == Algo::Ring) return allreduceRing(r);
      if (r.algo == Algo::HalvingDoubling) return allreduceRabenseifner(r);
      if (r.algo == Algo::RecursiveDoubling) return allreduceRecursiveDoubling(r);
      if (r.algo == Algo::OneShot) return allreduceOneShot(r);
      break;
    case Coll::Broadcast:
      if (r.algo == Algo::Tree) return broadcastTree(r);
      if (r.algo == Algo::Chain) return broadcastChain(r);
      if (r.algo == Algo::ScatterAllGather) return broadcastScatterAllGather(r);
      break;
    case Coll::Reduce:
      if (r.algo == Algo::Tree) return reduceTree(r);
      if (r.algo == Algo::ReduceScatterGather) return reduceReduceScatterGather(r);
      break;
    case Coll::AlltoAll:
      if (r.algo == Algo::Pairwise) return alltoallPairwise(r);
      if (r.algo == Algo::Bruck) return alltoallBruck(r);
      break;
    default: break;
  }
  return Schedule{};
}

}  // namespace slimeccl
