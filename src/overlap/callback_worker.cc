#include "src/overlap/callback_worker.h"

namespace slimeccl {

CallbackWorker::~CallbackWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void CallbackWorker::post(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.push_back(std::move(job));
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  wake_.notify_one();
}

void CallbackWorker::loop() {
  workerId_.store(std::this_thread::get_id());
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace slimeccl
