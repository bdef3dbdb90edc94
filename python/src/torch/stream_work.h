// The backend's CUDA half, built where libtorch has CUDA (SLIMECCL_TORCH_CUDA): an op on CUDA
// tensors is queued by the calling thread on torch's current stream of the tensors' GPU, as
// ProcessGroupNCCL's are, and its Work completes when that stream has passed the op. This header
// names no CUDA type, so the rest of the backend builds the same with or without it.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "slimeccl.h"
#include "slimeccl_work.h"

namespace slimeccl_torch {

// The slimeccl stream in the order of torch's current CUDA stream on `device`: made on first use
// and kept until the process exits, as PyTorch keeps its streams.
slimecclStream_t currentStreamOf(const at::Device& device);

// The place in a CUDA stream where the Works of one op, or of one batch of Send/Recv, complete.
class StreamPoint;
std::shared_ptr<StreamPoint> makeStreamPoint(const at::Device& device);
// After the op is queued: records the point on the device's current stream, which completes the
// futures of its Works there (their callbacks run in that stream's order, as DDP's hooks expect).
void markStreamPoint(StreamPoint& point);
// The op could not be queued: its Works and futures fail with `failure`.
void failStreamPoint(StreamPoint& point, std::exception_ptr failure);

// A Work at `point`: completed once the stream has passed it; wait() makes the caller's current
// stream wait for it without blocking the host, and raises a failure of the op or of the comm
// (slimecclCommGetAsyncError). A Send or Recv still in the batch `batch` asks its owner to issue it
// first.
c10::intrusive_ptr<c10d::Work> makeStreamWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                                              std::shared_ptr<StreamPoint> point, slimecclComm_t comm,
                                              std::weak_ptr<WorkOwner> owner,
                                              std::optional<uint64_t> batch = std::nullopt);

}  // namespace slimeccl_torch
