#include "tools/slimeccl-sim/time_format.h"

#include <fmt/format.h>

namespace slimeccl::sim {

std::string formatMicroseconds(double microseconds) {
  if (microseconds < 1.0e3) return fmt::format("{:.1f} us", microseconds);
  if (microseconds < 1.0e6) return fmt::format("{:.2f} ms", microseconds / 1.0e3);
  return fmt::format("{:.2f} s", microseconds / 1.0e6);
}

}  // namespace slimeccl::sim
