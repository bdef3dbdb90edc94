#include "algorithm_case.h"

#include <algorithm>

#include "rank_check.h"

namespace slimeccl_test {

const char* collectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllGather: return "AllGather";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kAllReduce: return "AllReduce";
    case Collective::kBroadcast: return "Broadcast";
    case Collective::kReduce: return "Reduce";
    case Collective::kAlltoAll: return "AlltoAll";
  }
  return "unknown collective";
}

const char* collectiveKey(Collective collective) {
  switch (collective) {
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kAllReduce: return "allreduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAlltoAll: return "alltoall";
  }
  return "unknown";
}

bool isReduction(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kReduceScatter ||
         collective == Collective::kReduce;
}

bool isRooted(Collective collective) {
  return collective == Collective::kBroadcast || collective == Collective::kReduce;
}

std::vector<std::string> algorithmsOf(Collective collective) {
  switch (collective) {
    case Collective::kAllGather: return {"ring", "hd", "direct", "hier"};
    case Collective::kReduceScatter: return {"ring", "hd"};
    case Collective::kAllReduce: return {"ring", "hd", "rd", "oneshot"};
    case Collective::kBroadcast: return {"tree", "chain", "scatter_ag"};
    case Collective::kReduce: return {"tree", "rs_gather"};
    case Collective::kAlltoAll: return {"pairwise", "bruck"};
  }
  return {};
}

std::vector<AlgorithmCase> algorithmCases(Collective collective, bool withTunerChoice,
                                          std::initializer_list<Launch> launches, std::initializer_list<int> nranks) {
  std::vector<std::string> algorithms = algorithmsOf(collective);
  if (withTunerChoice) algorithms.push_back(kTunerChoice);
  std::vector<AlgorithmCase> cases;
  for (const std::string& algorithm : algorithms) {
    for (Launch launch : launches) {
      for (int size : nranks) cases.push_back({collective, algorithm, launch, size});
    }
  }
  return cases;
}

RunOptions algorithmOptions(const AlgorithmCase& algorithmCase) {
  RunOptions options;
  if (algorithmCase.algorithm != kTunerChoice)
    options.env["SLIMECCL_ALGO"] = std::string(collectiveKey(algorithmCase.collective)) + ":" + algorithmCase.algorithm;
  return options;
}

std::string algorithmCaseName(const ::testing::TestParamInfo<AlgorithmCase>& info) {
  return info.param.algorithm + "_" + launchName(info.param.launch) + "_" + std::to_string(info.param.nranks) + "ranks";
}

void PrintTo(const AlgorithmCase& algorithmCase, std::ostream* os) {
  *os << collectiveName(algorithmCase.collective) << " with algorithm " << algorithmCase.algorithm << ", "
      << launchName(algorithmCase.launch) << " with " << algorithmCase.nranks << " ranks";
}

void checkRouteTaken(const AlgorithmCase& algorithmCase, slimecclComm_t comm) {
  slimecclOpRoute route;
  RANK_CHECK_RESULT(slimecclSuccess, slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(std::string(route.op) == collectiveName(algorithmCase.collective), "last op ", route.op);
  RANK_CHECK(route.route == slimecclRouteNet, "route ", route.route);
  if (algorithmCase.algorithm != kTunerChoice)
    RANK_CHECK(std::string(route.algorithm) == algorithmCase.algorithm, "ran ", route.algorithm, " where ",
               algorithmCase.algorithm, " was forced");
  const std::vector<std::string> known = algorithmsOf(algorithmCase.collective);
  RANK_CHECK(std::find(known.begin(), known.end(), std::string(route.algorithm)) != known.end(), "ran ",
             route.algorithm);
}

}  // namespace slimeccl_test
