// Names and sizes of datatypes and reduction ops as nccl-tests spells them on its command line and table.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "slimeccl.h"

namespace slimeccl_perf {

size_t dataTypeSize(slimecclDataType_t type);
const char* dataTypeName(slimecclDataType_t type);
// One name or "all"; throws UsageError for anything else.
std::vector<slimecclDataType_t> parseDataTypes(std::string_view name);

const char* redOpName(slimecclRedOp_t op);
// One name or "all"; throws UsageError for anything else.
std::vector<slimecclRedOp_t> parseRedOps(std::string_view name);

}  // namespace slimeccl_perf
