#include "common/datatypes.h"

#include <array>
#include <string>

#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

struct DataTypeEntry {
  slimecclDataType_t type;
  const char* name;
  size_t size;
};

// Order and names follow nccl-tests' test_typenames.
constexpr std::array<DataTypeEntry, slimecclNumTypes> kDataTypes{{
    {slimecclInt8, "int8", 1},
    {slimecclUint8, "uint8", 1},
    {slimecclInt32, "int32", 4},
    {slimecclUint32, "uint32", 4},
    {slimecclInt64, "int64", 8},
    {slimecclUint64, "uint64", 8},
    {slimecclFloat16, "half", 2},
    {slimecclFloat32, "float", 4},
    {slimecclFloat64, "double", 8},
    {slimecclBfloat16, "bfloat16", 2},
}};

constexpr std::array<const char*, slimecclNumOps> kRedOpNames{"sum", "prod", "max", "min", "avg"};

const DataTypeEntry& entryOf(slimecclDataType_t type) {
  for (const DataTypeEntry& entry : kDataTypes) {
    if (entry.type == type) return entry;
  }
  throw UsageError("unknown datatype value " + std::to_string(static_cast<int>(type)));
}

}  // namespace

size_t dataTypeSize(slimecclDataType_t type) { return entryOf(type).size; }

const char* dataTypeName(slimecclDataType_t type) { return entryOf(type).name; }

std::vector<slimecclDataType_t> parseDataTypes(std::string_view name) {
  std::vector<slimecclDataType_t> types;
  for (const DataTypeEntry& entry : kDataTypes) {
    if (name == "all" || name == entry.name) types.push_back(entry.type);
  }
  if (types.empty()) {
    throw UsageError("invalid datatype '" + std::string(name) +
                     "' (int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16 or all)");
  }
  return types;
}

const char* redOpName(slimecclRedOp_t op) {
  if (op < 0 || op >= slimecclNumOps) throw UsageError("unknown reduction op value " + std::to_string(op));
  return kRedOpNames[op];
}

std::vector<slimecclRedOp_t> parseRedOps(std::string_view name) {
  std::vector<slimecclRedOp_t> ops;
  for (int op = 0; op < slimecclNumOps; ++op) {
    if (name == "all" || name == kRedOpNames[op]) ops.push_back(static_cast<slimecclRedOp_t>(op));
  }
  if (ops.empty()) throw UsageError("invalid op '" + std::string(name) + "' (sum, prod, max, min, avg or all)");
  return ops;
}

}  // namespace slimeccl_perf
