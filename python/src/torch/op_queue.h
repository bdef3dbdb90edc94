// The process group's ops, run one after another in the order they were issued, off the
// caller's thread (as Gloo's process group does): by the group's worker thread, or by a thread
// that waits on the next op before the worker took it.
//
// Waking the worker costs more than a small op on a busy machine (two thread switches, about
// 25 us per op on two cores with four ranks). So while callers wait on each op at once (blocking
// calls), pushing an op does not wake the worker: the caller runs it in its wait, and the worker,
// polling, takes only ops left alone for kStealGraceUs (an op nobody waits on starts that late).
// Once the worker has run an op nobody waited for (asynchronous use: DDP's buckets), each push
// wakes it, until a caller again waits on an op before it is done.
#pragma once

#include <chrono>
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
    std::chrono::steady_clock::time_point pushed;
  };

  OpQueue();
  // Runs what is queued, then stops.
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  void push(Job job);
  // Called by a thread about to wait on `work`: runs its job here if it is next and no job is
  // running.
  void runHereIfNext(const SlimecclWork* work);
  // Returns once every job pushed so far has run (the worker takes them at once meanwhile).
  void drain();

 private:
  void loop();
  // Whether the worker may take the front job now (the lock held).
  bool workerMayTake(std::chrono::steady_clock::time_point now) const;
  // Takes the front job (the lock held) and runs it with the lock released.
  void runFront(std::unique_lock<std::mutex>& lock);
  // Runs a job taken off the queue (busy_ set), then lets the next one start.
  void runTaken(Job& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  const Job* running_ = nullptr;  // the job running (busy), for runHereIfNext
  bool busy_ = false;             // a job is running, on the worker or on a waiting thread
  bool asynchronous_ = false;     // ops are left to the worker: wake it on push
  bool workerAsleep_ = false;     // the worker waits for a wake-up, not polling
  std::chrono::steady_clock::time_point lastPush_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace slimeccl_torch
