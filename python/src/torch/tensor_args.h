// What slimeccl needs of torch's arguments: the datatype and reduction of a tensor, checked.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <string>

#include "slimeccl.h"

namespace slimeccl_torch {

// "rank 2: AllReduce": the start of every sentence about one op of this rank.
std::string opLabel(int rank, const char* op);
// The datatype of a tensor; complex tensors travel as pairs of their real type. Throws (c10::Error,
// a RuntimeError in Python) naming the op for an unsupported type, or for a tensor on a device
// this build does not serve (CUDA needs the CUDA half, stream_work.h).
slimecclDataType_t typeOf(const at::Tensor& t, const std::string& op);
// The reduction of one op: a built-in operator, or (torch's PREMUL_SUM) a sum of every rank's
// input multiplied by its own scalar, made into a slimeccl operator for each call.
struct Reduction {
  slimecclRedOp_t op = slimecclSum;
  at::Tensor premulScalar;  // PREMUL_SUM: one element of the tensors' dtype, on the CPU or their GPU
};
// The reduction for torch's op on tensors like t. Booleans reduce as uint8 with MAX for SUM and MIN
// for PRODUCT (logical or / and); complex tensors only sum or average; PREMUL_SUM takes floating
// tensors, with a factor given as a number or a one-element tensor.
Reduction reductionOf(const c10d::ReduceOp& op, const at::Tensor& t, const std::string& label);
// The tensor slimeccl reads or writes: complex as its real view.
at::Tensor wireView(const at::Tensor& t);
// Exactly one tensor in the list (torch's one-device-per-process form).
const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const std::string& op);

}  // namespace slimeccl_torch
