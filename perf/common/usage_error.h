// A command line or environment the tools cannot run with; main prints it and exits.
#pragma once

#include <stdexcept>

namespace slimeccl_perf {

// The exit status of a command line the tools refuse, as for every slimeccl tool.
inline constexpr int kUsageErrorStatus = 2;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace slimeccl_perf
