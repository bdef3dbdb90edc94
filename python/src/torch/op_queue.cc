#include "op_queue.h"

namespace slimeccl_torch {

OpQueue::OpQueue() : worker_([this] { loop(); }) {}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void OpQueue::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void OpQueue::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::exception_ptr failure;
    try {
      job.run();
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& work : job.works) work->complete(failure);
  }
}

}  // namespace slimeccl_torch
