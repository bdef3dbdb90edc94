#include "slimeccl_work.h"

namespace slimeccl_torch {
const c10::TypePtr& tensorListType() {
  static const c10::TypePtr type = c10::ListType::create(c10::TensorType::get());
  return type;
}

SlimecclWork::SlimecclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<WorkOwner> owner,
                           std::optional<uint64_t> batch)
    : c10d::Work(rank, type), outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(tensorListType())), owner_(std::move(owner)), batch_(batch) {}

void SlimecclWork::issueBatch() {
  if (!batch_) return;
  if (auto owner = owner_.lock()) owner->issueBatch(*batch_);
}

bool SlimecclWork::isCompleted() {
  issueBatch();
  return c10d::Work::isCompleted();
}

bool SlimecclWork::wait(std::chrono::milliseconds timeout) {
  issueBatch();
  if (auto owner = owner_.lock()) owner->runHereIfNext(this);
  return c10d::Work::wait(timeout);
}

void SlimecclWork::complete(std::exception_ptr exception) {
  // The future first: its callbacks (DDP's hooks) see the result before a waiter returns.
  if (exception)
    future_->setError(exception);
  else
    future_->markCompleted(c10::IValue(outputs_));
  finish(exception);
}

}  // namespace slimeccl_torch
