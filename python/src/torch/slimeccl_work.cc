#include "slimeccl_work.h"

namespace slimeccl_torch {

SlimecclWork::SlimecclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::function<void()> flush)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))),
      flush_(std::move(flush)) {}

void SlimecclWork::flushOnce() {
  if (flush_) std::call_once(flushed_, flush_);
}

bool SlimecclWork::isCompleted() {
  flushOnce();
  return c10d::Work::isCompleted();
}

bool SlimecclWork::wait(std::chrono::milliseconds timeout) {
  flushOnce();
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
