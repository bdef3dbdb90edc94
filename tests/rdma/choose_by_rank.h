// Which verbs device (or other per-rank setting) a test rank takes: rank r takes entry r mod n
// of a comma list, so that ranks alternate between the two soft-RoCE "hosts". Header-only, so
// that tools linked against the library's internals use it too.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace rdma_test {

// Sets variable (e.g. SLIMECCL_IB_HCA) to entry (rank mod n) of a comma list; an empty list leaves
// it alone.
inline void chooseByRank(const char* variable, const std::string& list, int rank) {
  if (list.empty()) return;
  std::vector<std::string> names;
  size_t start = 0;
  for (size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
    names.push_back(list.substr(start, comma - start));
  names.push_back(list.substr(start));
  setenv(variable, names[rank % names.size()].c_str(), 1);
}

}  // namespace rdma_test
