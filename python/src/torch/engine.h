// What a slimeccl process group runs on: its communicator, its worker thread, and the batch of
// Send/Recv not issued yet (process_group.h says why they wait).
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "op_queue.h"
#include "slimeccl.h"

namespace slimeccl_torch {

class Engine;

// Inside a job, a slimeccl group: the first call that fails is the one reported, once the group
// has ended (a group is always ended, so the thread's next call is not inside it).
class GroupRun {
 public:
  explicit GroupRun(const Engine& engine);
  void call(slimecclResult_t rc);
  // Ends the group; throws the first failure.
  void end();

 private:
  const Engine& engine_;
  slimecclResult_t failed_ = slimecclSuccess;
  std::string sentence_;
};

class Engine : public WorkOwner, public std::enable_shared_from_this<Engine> {
 public:
  Engine(slimecclComm_t comm, int rank);
  // Issues the batch, runs what is queued, then destroys the communicator.
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  slimecclComm_t comm() const { return comm_; }
  int rank() const { return rank_; }
  // Throws slimeccl's sentence for this comm unless rc is slimecclSuccess (on the worker).
  void check(slimecclResult_t rc) const;
  // Throws this sentence of a failure with code rc.
  [[noreturn]] void fail(slimecclResult_t rc, const std::string& sentence) const;

  // Queues an op (after the batch of Send/Recv so far): run calls slimeccl on the worker; the
  // Work completes with outputs once it returns.
  c10::intrusive_ptr<c10d::Work> queue(c10d::OpType type, std::vector<at::Tensor> outputs, std::function<void()> run);
  // Adds a Send (of a contiguous tensor) or a Recv (into `tensor`) to the batch.
  c10::intrusive_ptr<c10d::Work> pointToPoint(bool send, const at::Tensor& tensor, int peer);
  // Issues the batch now (the end of batch_isend_irecv).
  void flush();

  void issueBatch(uint64_t batch) override;
  void runHereIfNext(const SlimecclWork* work) override { queue_->runHereIfNext(work); }

 private:
  struct PointToPoint {
    bool send;
    at::Tensor wire;    // what slimeccl reads or writes: contiguous
    at::Tensor target;  // a Recv's tensor, when it is not `wire`
    int peer;
  };

  void flushLocked();

  slimecclComm_t comm_;
  int rank_;
  std::mutex mutex_;  // issue order, the batch
  std::vector<PointToPoint> batch_;
  std::vector<c10::intrusive_ptr<SlimecclWork>> batchWorks_;
  uint64_t batchId_ = 0;
  std::unique_ptr<OpQueue> queue_;
};

}  // namespace slimeccl_torch
