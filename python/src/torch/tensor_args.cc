#include "tensor_args.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

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

namespace {

// PREMUL_SUM's factor as one element of t's dtype: on the CPU for a number (read when the operator
// is made), where t is for a tensor (read by the op in its stream's order).
at::Tensor premulScalarOf(const c10d::ReduceOp& op, const at::Tensor& t, const std::string& label) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), label, ": PREMUL_SUM takes floating tensors, not ", t.scalar_type());
  const auto* factor = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(factor != nullptr, label, ": a PREMUL_SUM without its factor");
#if TORCH_VERSION_MAJOR >= 2
  const at::Tensor& given = factor->tensor_factor;
#else
  const at::Tensor given = factor->tensor_factors.empty() ? at::Tensor() : factor->tensor_factors.front();
#endif
  if (!given.defined())
    return at::full({1}, factor->double_factor, at::TensorOptions().dtype(t.scalar_type()).device(at::kCPU));
  TORCH_CHECK(given.numel() == 1, label, ": PREMUL_SUM's factor holds ", given.numel(), " elements, not one");
  return given.reshape({1}).to(t.device(), t.scalar_type()).contiguous();
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
                  " is not supported (SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM are)");
  }
}

}  // namespace

Reduction reductionOf(const c10d::ReduceOp& op, const at::Tensor& t, const std::string& label) {
  if (op == c10d::ReduceOp::PREMUL_SUM) return Reduction{slimecclSum, premulScalarOf(op, t, label)};
  return Reduction{redOpOf(op, t, label), at::Tensor()};
}

at::Tensor wireView(const at::Tensor& t) { return t.is_complex() ? at::view_as_real(t) : t; }

const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const std::string& op) {
  TORCH_CHECK(tensors.size() == 1, op, ": takes one tensor per call, got ", tensors.size());
  return tensors[0];
}

}  // namespace slimeccl_torch
