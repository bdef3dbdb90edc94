// The process group's worker thread: runs its ops one after another, in the order they were
// issued, off the caller's thread (as Gloo's process group does), and completes their Work.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "slimeccl_work.h"

namespace slimeccl_torch {

class OpQueue {
 public:
  // run throws on failure; its exception completes the Work of each op it runs (a batch of
  // Send/Recv runs as one job).
  struct Job {
    std::function<void()> run;
    std::vector<c10::intrusive_ptr<SlimecclWork>> works;
  };

  OpQueue();
  // Runs what is queued, then stops.
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  void push(Job job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace slimeccl_torch
