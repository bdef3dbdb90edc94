#include "launch_case.h"

namespace slimeccl_test {

std::vector<LaunchCase> launch_cases(std::initializer_list<Launch> launches, std::initializer_list<int> nranks) {
  std::vector<LaunchCase> cases;
  for (Launch launch : launches) {
    for (int size : nranks) cases.push_back({launch, size});
  }
  return cases;
}

std::string launch_case_name(const ::testing::TestParamInfo<LaunchCase>& info) {
  return std::string(launch_name(info.param.launch)) + "_" + std::to_string(info.param.nranks) + "ranks";
}

void PrintTo(const LaunchCase& launch_case, std::ostream* os) {
  *os << launch_name(launch_case.launch) << " with " << launch_case.nranks << " ranks";
}

}  // namespace slimeccl_test
