// The Work torch hands back for each op: completed by the process group's worker thread once
// the op ran, with a Future for DDP's communication hooks.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <vector>

namespace slimeccl_torch {

class SlimecclWork : public c10d::Work {
 public:
  // flush: runs before a wait or a completion check, so that a deferred Send/Recv is issued
  // (empty for ops queued at once).
  SlimecclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::function<void()> flush = {});

  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  // Called once, by the worker: success (exception null) or the op's failure.
  void complete(std::exception_ptr exception);

 private:
  void flushOnce();

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::function<void()> flush_;
  std::once_flag flushed_;
};

}  // namespace slimeccl_torch
