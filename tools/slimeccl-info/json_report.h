// slimeccl-info's report for tools (--json).
#pragma once

#include <string>

#include "tools/slimeccl-info/info_report.h"

namespace slimeccl::info {

std::string jsonReport(const InfoReport& report);

}  // namespace slimeccl::info
