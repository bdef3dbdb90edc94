// slimeccl-info's human-readable report.
#pragma once

#include <string>

#include "tools/slimeccl-info/info_report.h"

namespace slimeccl::info {

std::string textReport(const InfoReport& report);

}  // namespace slimeccl::info
