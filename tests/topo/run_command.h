// Runs a program with a clean SLIMECCL_* environment plus the given variables, and collects its
// exit status, standard output and standard error.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace slimeccl::test {

struct CommandResult {
  int status = -1;  // exit status; 128 + signal when killed
  std::string out;
  std::string err;
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

CommandResult runCommand(const std::string& program, const std::vector<std::string>& args, const EnvList& env = {});

}  // namespace slimeccl::test
