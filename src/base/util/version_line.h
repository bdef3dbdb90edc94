// What every tool prints for --version: "TOOL (slimeccl X.Y.Z)", from include/slimeccl.h.
#pragma once

#include <string>

#include "include/slimeccl.h"

namespace slimeccl {

inline std::string versionLine(const std::string& tool) {
  return tool + " (slimeccl " + std::to_string(SLIMECCL_MAJOR) + "." + std::to_string(SLIMECCL_MINOR) + "." +
         std::to_string(SLIMECCL_PATCH) + ")\n";
}

}  // namespace slimeccl
