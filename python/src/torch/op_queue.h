// The process group's ops, run one after another in the order they were issued, off the
// caller's thread (as Gloo's process group does): by the group's worker thread, or by a thread
// that waits on the next op while the worker is idle.
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
  // Runs the job of `work` on the calling thread if it is next and no job is running.
  void runHereIfNext(const SlimecclWork* work);

 private:
  void loop();
  // Runs a job taken off the queue (busy_ set), then lets the next one start.
  void runTaken(Job& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool busy_ = false;  // a job is running, on the worker or on a waiting thread
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace slimeccl_torch
