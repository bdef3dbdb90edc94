// Durations for the tool's output: microseconds, milliseconds or seconds, whichever reads best.
#pragma once

#include <string>

namespace slimeccl::sim {

std::string formatMicroseconds(double microseconds);

}  // namespace slimeccl::sim
