// How often a phrase occurs in a text the tests read back: a captured log (log_warnings.cc switches
// warnings on) or a dump.
#pragma once

#include <cstddef>
#include <string>

namespace slimeccl {

inline size_t countOf(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace slimeccl
