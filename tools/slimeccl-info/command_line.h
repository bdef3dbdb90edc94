// slimeccl-info's command line.
#pragma once

#include <string>

namespace slimeccl::info {

struct Options {
  bool json = false;
  int localRanks = 0;  // 0: SLIMECCL_LOCAL_NRANKS, else one per GPU, else 1
  bool help = false;
  bool version = false;
};

// Returns false with *error set when the arguments are wrong.
bool parseCommandLine(int argc, char** argv, Options* out, std::string* error);
const char* usageText();

}  // namespace slimeccl::info
