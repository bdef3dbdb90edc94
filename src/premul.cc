#include "src/premul.h"

#include <cstring>

#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/op.h"

namespace slimeccl {

slimecclResult_t PreMulSumOps::create(int rank, const void* scalar, slimecclDataType_t type,
                                      slimecclScalarResidence_t residence, slimecclRedOp_t* out) {
  const char* call = "RedOpCreatePreMulSum";
  if (out == nullptr) return fail(slimecclInvalidArgument, "rank {}: {}: op is NULL", rank, call);
  if (scalar == nullptr) return fail(slimecclInvalidArgument, "rank {}: {}: scalar is NULL", rank, call);
  if (type < 0 || type >= slimecclNumTypes)
    return fail(slimecclInvalidArgument, "rank {}: {}: datatype {} is not a slimecclDataType_t", rank, call,
                static_cast<int>(type));
  Entry entry;
  entry.live = true;
  entry.type = type;
  entry.scalar.on = true;
  switch (residence) {
    case slimecclScalarHostImmediate: memcpy(&entry.scalar.bits, scalar, typeSize(type)); break;
    case slimecclScalarDevice:
      if (!isDeviceMemory(scalar, &entry.scalar.deviceIndex))
        return fail(slimecclInvalidArgument,
                    "rank {}: {}: the scalar {} is not device memory, as slimecclScalarDevice says it is", rank, call,
                    scalar);
      entry.scalar.device = scalar;
      break;
    default:
      return fail(slimecclInvalidArgument, "rank {}: {}: residence {} is not a slimecclScalarResidence_t", rank, call,
                  static_cast<int>(residence));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  size_t slot = 0;
  while (slot < entries_.size() && entries_[slot].live) ++slot;
  if (slot == entries_.size()) entries_.emplace_back();
  entries_[slot] = entry;
  *out = static_cast<slimecclRedOp_t>(slimecclNumOps + slot);
  return slimecclSuccess;
}

const PreMulSumOps::Entry* PreMulSumOps::live(slimecclRedOp_t op) const {
  const long slot = static_cast<long>(op) - slimecclNumOps;
  if (slot < 0 || slot >= static_cast<long>(entries_.size()) || !entries_[slot].live) return nullptr;
  return &entries_[slot];
}

slimecclResult_t PreMulSumOps::destroy(int rank, slimecclRedOp_t op) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live(op) == nullptr)
    return fail(slimecclInvalidArgument,
                "rank {}: RedOpDestroy: op {} is not an operator of this communicator's slimecclRedOpCreatePreMulSum "
                "(or was destroyed already)",
                rank, static_cast<int>(op));
  entries_[static_cast<size_t>(op) - slimecclNumOps].live = false;
  return slimecclSuccess;
}

slimecclResult_t PreMulSumOps::take(int rank, const char* opName, slimecclRedOp_t op, slimecclDataType_t type,
                                    PreMulScalar* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry* entry = live(op);
  if (entry == nullptr)
    return fail(slimecclInvalidArgument,
                "rank {}: {}: reduction op {} is neither a slimecclRedOp_t (0..{}) nor a live operator of this "
                "communicator's slimecclRedOpCreatePreMulSum",
                rank, opName, static_cast<int>(op), slimecclNumOps - 1);
  if (entry->type != type)
    return fail(slimecclInvalidArgument,
                "rank {}: {}: reduction op {} was made for datatype {}, and the call's datatype is {}", rank, opName,
                static_cast<int>(op), typeName(entry->type), typeName(type));
  *out = entry->scalar;
  return slimecclSuccess;
}

slimecclResult_t premulScalarBits(const PreMulScalar& scalar, slimecclDataType_t type, CopyOrder order,
                                  uint64_t* bits) {
  *bits = scalar.bits;
  if (scalar.device == nullptr) return slimecclSuccess;
  *bits = 0;
  return gpuCopy(bits, scalar.device, typeSize(type), scalar.deviceIndex, order);
}

}  // namespace slimeccl
