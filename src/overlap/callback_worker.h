// The communicator's thread for AllGatherOverlap callbacks. One long-lived thread per
// communicator: callbacks of one communicator run one at a time, a thread is not created per call,
// and a BLAS that keeps per-thread buffers (OpenBLAS) sets them up once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace slimeccl {

class CallbackWorker {
 public:
  CallbackWorker() = default;
  CallbackWorker(const CallbackWorker&) = delete;
  CallbackWorker& operator=(const CallbackWorker&) = delete;
  // The communicator is destroyed only when no op is pending, so no job is left by then.
  ~CallbackWorker();

  // Runs job on the worker after the jobs posted before it; starts the thread on first use.
  void post(std::function<void()> job);
  // Whether the caller is this worker, i.e. a callback calling back into its communicator.
  bool isCurrentThread() const { return workerId_.load() == std::this_thread::get_id(); }

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
  std::atomic<std::thread::id> workerId_{};
};

}  // namespace slimeccl
