#include "tensor_args.h"

#include <c10/util/Exception.h>

namespace slimeccl_torch {

std::string opLabel(int rank, const char* op) { return "slimeccl: rank " + std::to_string(rank) + ": " + op; }

slimecclDataType_t typeOf(const at::Tensor& t, const std::string& op) {
#ifdef SLIMECCL_TORCH_CUDA
  TORCH_CHECK(t.device().is_cpu() || t.device().is_cuda(), op, ": the tensor is on ", t.device(),
              "; the slimeccl backend takes CPU and CUDA tensors");
#else
  TORCH_CHECK(t.device().is_cpu(), op, ": the tensor is on ", t.device(),
              "; this build of the slimeccl backend takes CPU tensors: it was built against a libtorch without "
              "CUDA (docs/python.md)");
#endif
  switch (t.scalar_type()) {
    case at::kBool:
    case at::kByte: return slimecclUint8;
    case at::kChar: return slimecclInt8;
    case at::kInt: return slimecclInt32;
    case at::kLong: return slimecclInt64;
    case at::kHalf: return slimecclFloat16;
    case at::kFloat:
    case at::kComplexFloat: return slimecclFloat32;
    case at::kDouble:
    case at::kComplexDouble: return slimecclFloat64;
    case at::kBFloat16: return slimecclBfloat16;
    default: TORCH_CHECK(false, op, ": tensors of ", t.scalar_type(), " are not supported");
  }
}

slimecclRedOp_t redOpOf(const c10d::ReduceOp& op, const at::Tensor& t, const std::string& label) {
  const bool isBool = t.scalar_type() == at::kBool;
  if (t.is_complex())
    TORCH_CHECK(op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG, label,
                ": complex tensors can only be summed or averaged");
  switch (op) {
    case c10d::ReduceOp::SUM: return isBool ? slimecclMax : slimecclSum;
    case c10d::ReduceOp::PRODUCT: return isBool ? slimecclMin : slimecclProd;
    case c10d::ReduceOp::MIN: return slimecclMin;
    case c10d::ReduceOp::MAX: return slimecclMax;
    case c10d::ReduceOp::AVG: TORCH_CHECK(!isBool, label, ": booleans cannot be averaged"); return slimecclAvg;
    default:
      TORCH_CHECK(false, label, ": the reduction ", static_cast<int>(op.op_),
                  " is not supported (SUM, PRODUCT, MIN, MAX and AVG are)");
  }
}

at::Tensor wireView(const at::Tensor& t) { return t.is_complex() ? at::view_as_real(t) : t; }

const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const std::string& op) {
  TORCH_CHECK(tensors.size() == 1, op, ": takes one tensor per call, got ", tensors.size());
  return tensors[0];
}

}  // namespace slimeccl_torch
