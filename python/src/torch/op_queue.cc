#include "op_queue.h"

#include <algorithm>

namespace slimeccl_torch {

OpQueue::OpQueue() : worker_([this] { loop(); }) {}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void OpQueue::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_all();
}

void OpQueue::runHereIfNext(const SlimecclWork* work) {
  Job job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_ || jobs_.empty()) return;
    const auto& works = jobs_.front().works;
    if (std::none_of(works.begin(), works.end(), [&](const auto& w) { return w.get() == work; })) return;
    job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
  }
  runTaken(job);
}

void OpQueue::runTaken(Job& job) {
  std::exception_ptr failure;
  try {
    job.run();
  } catch (...) {
    failure = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
  }
  wake_.notify_all();
  for (auto& work : job.works) work->complete(failure);
}

void OpQueue::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return !busy_ && (stopping_ || !jobs_.empty()); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
    }
    runTaken(job);
  }
}

}  // namespace slimeccl_torch
