#include "algorithm_case.h"

#include <algorithm>

#include "rank_check.h"

namespace slimeccl_test {

const char* collective_name(Collective collective) {
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

const char* collective_key(Collective collective) {
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

bool is_reduction(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kReduceScatter ||
         collective == Collective::kReduce;
}

bool is_rooted(Collective collective) {
  return collective == Collective::kBroadcast || collective == Collective::kReduce;
}

std::vector<std::string> algorithms_of(Collective collective) {
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

std::vector<AlgorithmCase> algorithm_cases(Collective collective, bool with_tuner_choice,
                                           std::initializer_list<Launch> launches, std::initializer_list<int> nranks) {
  std::vector<std::string> algorithms = algorithms_of(collective);
  if (with_tuner_choice) algorithms.push_back(kTunerChoice);
  std::vector<AlgorithmCase> cases;
  for (const std::string& algorithm : algorithms) {
    for (Launch launch : launches) {
      for (int size : nranks) cases.push_back({collective, algorithm, launch, size});
    }
  }
  return cases;
}

RunOptions algorithm_options(const AlgorithmCase& algorithm_case) {
  RunOptions options;
  if (algorithm_case.algorithm != kTunerChoice)
    options.env["SLIMECCL_ALGO"] =
        std::string(collective_key(algorithm_case.collective)) + ":" + algorithm_case.algorithm;
  return options;
}

std::string algorithm_case_name(const ::testing::TestParamInfo<AlgorithmCase>& info) {
  return info.param.algorithm + "_" + launch_name(info.param.launch) + "_" + std::to_string(info.param.nranks) +
         "ranks";
}

void PrintTo(const AlgorithmCase& algorithm_case, std::ostream* os) {
  *os << collective_name(algorithm_case.collective) << " with algorithm " << algorithm_case.algorithm << ", "
      << launch_name(algorithm_case.launch) << " with " << algorithm_case.nranks << " ranks";
}

void check_route_taken(const AlgorithmCase& algorithm_case, slimecclComm_t comm) {
  slimecclOpRoute route;
  RANK_CHECK_RESULT(slimecclSuccess, slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(std::string(route.op) == collective_name(algorithm_case.collective), "last op ", route.op);
  RANK_CHECK(route.route == slimecclRouteNet, "route ", route.route);
  if (algorithm_case.algorithm != kTunerChoice)
    RANK_CHECK(std::string(route.algorithm) == algorithm_case.algorithm, "ran ", route.algorithm, " where ",
               algorithm_case.algorithm, " was forced");
  const std::vector<std::string> known = algorithms_of(algorithm_case.collective);
  RANK_CHECK(std::find(known.begin(), known.end(), std::string(route.algorithm)) != known.end(), "ran ",
             route.algorithm);
}

}  // namespace slimeccl_test
