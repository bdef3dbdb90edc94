// printf-style formatting into std::string, so report lines keep nccl-tests' exact printf formats.
#pragma once

#include <string>

namespace slimeccl_perf {

std::string formatString(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace slimeccl_perf
