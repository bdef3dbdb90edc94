#include "op_queue.h"

#include <algorithm>

namespace slimeccl_torch {
namespace {

using Clock = std::chrono::steady_clock;
// How long the worker leaves a new op to a caller that may wait on it.
constexpr auto kStealGrace = std::chrono::milliseconds(2);
// How often the worker looks at the queue while ops come without waking it.
constexpr auto kPoll = std::chrono::milliseconds(5);
// After this long without a new op, the worker sleeps until woken.
constexpr auto kIdle = std::chrono::milliseconds(100);

bool holds(const OpQueue::Job& job, const SlimecclWork* work) {
  return std::any_of(job.works.begin(), job.works.end(), [&](const auto& w) { return w.get() == work; });
}

}  // namespace

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
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job.pushed = lastPush_ = Clock::now();
    jobs_.push_back(std::move(job));
    wake = asynchronous_ || workerAsleep_;
  }
  if (wake) wake_.notify_all();
}

void OpQueue::runHereIfNext(const SlimecclWork* work) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool queued = std::any_of(jobs_.begin(), jobs_.end(), [&](const Job& j) { return holds(j, work); });
  // A wait on an op not done yet: callers wait on their ops, so leave new ones to them.
  if (queued || (running_ != nullptr && holds(*running_, work))) asynchronous_ = false;
  if (busy_ || jobs_.empty() || !holds(jobs_.front(), work)) return;
  runFront(lock);
}

void OpQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  // On the worker (a Work's callback issuing an op), nobody else would take the jobs.
  while (std::this_thread::get_id() == worker_.get_id() && !busy_ && !jobs_.empty()) runFront(lock);
  if (jobs_.empty() && !busy_) return;
  asynchronous_ = true;
  wake_.notify_all();
  wake_.wait(lock, [this] { return jobs_.empty() && !busy_; });
}

bool OpQueue::workerMayTake(Clock::time_point now) const {
  return !busy_ && !jobs_.empty() && (asynchronous_ || stopping_ || now - jobs_.front().pushed >= kStealGrace);
}

void OpQueue::runFront(std::unique_lock<std::mutex>& lock) {
  Job job = std::move(jobs_.front());
  jobs_.pop_front();
  busy_ = true;
  running_ = &job;
  lock.unlock();
  runTaken(job);
  lock.lock();
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
    running_ = nullptr;
  }
  wake_.notify_all();
  for (auto& work : job.works) work->complete(failure);
}

void OpQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (workerMayTake(now)) {
      // Nobody ran it in a wait: ops are left to the worker from now on.
      asynchronous_ = true;
      runFront(lock);
      continue;
    }
    if (stopping_ && jobs_.empty() && !busy_) return;
    if (jobs_.empty() && !busy_ && now - lastPush_ >= kIdle) {
      workerAsleep_ = true;
      wake_.wait(lock);
      workerAsleep_ = false;
    } else {
      wake_.wait_for(lock, kPoll);
    }
  }
}

}  // namespace slimeccl_torch
