#include "launch_case.h"

namespace slimeccl_test {

std::vector<LaunchCase> launchCases(std::initializer_list<Launch> launches, std::initializer_list<int> nranks) {
  std::vector<LaunchCase> cases;
  for (Launch launch : launches) {
    for (int size : nranks) cases.push_back({launch, size});
  }
  return cases;
}

std::string launchCaseName(const ::testing::TestParamInfo<LaunchCase>& info) {
  return std::string(launchName(info.param.launch)) + "_" + std::to_string(info.param.nranks) + "ranks";
}

void PrintTo(const LaunchCase& launchCase, std::ostream* os) {
  *os << launchName(launchCase.launch) << " with " << launchCase.nranks << " ranks";
}

}  // namespace slimeccl_test
