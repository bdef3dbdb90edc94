// The Work torch hands back for each op: completed by the process group's worker thread once
// the op ran (or by the waiting thread, see WorkOwner), with a Future for DDP's communication hooks.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace slimeccl_torch {

class SlimecclWork;

// The type of every Work's future value: a list of tensors.
const c10::TypePtr& tensorListType();

// What a Work asks of its process group before anyone waits on it.
class WorkOwner {
 public:
  virtual ~WorkOwner() = default;
  // Issues the batch of Send/Recv `batch`, if it still waits.
  virtual void issueBatch(uint64_t batch) = 0;
  // Runs the work's op on the calling thread when it is the next to run and the group's thread is
  // idle: a blocking call waits on its op at once, and two thread switches would cost more than
  // a small op.
  virtual void runHereIfNext(const SlimecclWork* work) = 0;
};

class SlimecclWork : public c10d::Work {
 public:
  // batch: the Send/Recv batch the op waits in, for a Send or Recv.
  SlimecclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<WorkOwner> owner,
               std::optional<uint64_t> batch = std::nullopt);

  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  // Called once, after the op ran: success (exception null) or its failure.
  void complete(std::exception_ptr exception);

 private:
  void issueBatch();

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::weak_ptr<WorkOwner> owner_;
  std::optional<uint64_t> batch_;
};

}  // namespace slimeccl_torch
