// What a slimeccl process group runs on: its communicator, its worker thread for ops on CPU
// tensors, and the batch of Send/Recv not issued yet (process_group.h says why they wait). Ops on
// CUDA tensors are issued by the calling thread on torch's current stream (stream_work.h), after
// the host ops issued before them have run, so the comm sees every op in issue order.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "op_queue.h"
#include "slimeccl.h"
#include "stream_work.h"
#include "tensor_args.h"

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

// The slimeccl operator of one call's reduction: the built-in one, or a pre-multiplied sum made for
// the comm from the reduction's scalar and freed after the call (calls made with it may run on).
class CallOperator {
 public:
  CallOperator(const Engine& engine, const Reduction& reduction, slimecclDataType_t type);
  ~CallOperator();
  CallOperator(const CallOperator&) = delete;
  CallOperator& operator=(const CallOperator&) = delete;
  slimecclRedOp_t op() const { return op_; }

 private:
  const Engine& engine_;
  slimecclRedOp_t op_;
  bool made_ = false;
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

  // Calls slimeccl for one op on the stream it is given: NULL for host tensors (the calls return
  // when done), else the slimeccl stream of torch's current CUDA stream.
  using OpRun = std::function<void(slimecclStream_t)>;
  // Issues an op on tensors of `device` (after the batch of Send/Recv so far). On the CPU, run
  // is queued for the worker and the Work completes with outputs once it returns; on a GPU, it
  // runs here, and the Work completes when torch's current stream has done it.
  c10::intrusive_ptr<c10d::Work> queue(c10d::OpType type, std::vector<at::Tensor> outputs, const at::Device& device,
                                       OpRun run);
  // Adds a Send (of a contiguous tensor) or a Recv (into `tensor`) to the batch.
  c10::intrusive_ptr<c10d::Work> pointToPoint(bool send, const at::Tensor& tensor, int peer);
  // Issues the batch now (the end of batch_isend_irecv).
  void flush();
  // Issues the batch; the Work completes once every op issued so far has (the end of a coalesced
  // block: PyTorch 2 waits on that Work for all of the block's ops).
  c10::intrusive_ptr<c10d::Work> fence(c10d::OpType type);

  void issueBatch(uint64_t batch) override;
  void runHereIfNext(const SlimecclWork* work) override { queue_->runHereIfNext(work); }

 private:
  struct PointToPoint {
    bool send;
    at::Tensor wire;    // what slimeccl reads or writes: contiguous
    at::Tensor target;  // a Recv's tensor, when it is not `wire`
    int peer;
  };
  // Send/Recv on tensors of one device, issued together as one slimeccl group.
  struct Batch {
    at::Device device = at::Device(at::kCPU);
    std::vector<PointToPoint> ops;
    std::vector<c10::intrusive_ptr<SlimecclWork>> works;  // on the CPU
    std::shared_ptr<StreamPoint> point;                   // on a GPU: where its Works complete
  };

  // Takes the batch (mutex_ held): a CPU batch is queued for the worker at once; a GPU batch is
  // handed back, to be issued once mutex_ is released (issuing waits for the worker, whose
  // callbacks may issue ops).
  std::optional<Batch> takeBatchLocked();
  // Issues what takeBatchLocked handed back.
  void issueTaken(std::optional<Batch> batch);
  // Calls slimeccl for a batch's ops as one group on `stream`, then lands the Recvs' results.
  void runBatch(const std::vector<PointToPoint>& ops, slimecclStream_t stream);
  // Once the worker is idle, runs `run` on torch's current stream of `device`, then marks `point`
  // after it (or fails it with what run threw).
  void runOnStream(StreamPoint& point, const at::Device& device, const OpRun& run);
  // An op on CUDA tensors: runs it on torch's current stream once the worker is idle.
  c10::intrusive_ptr<c10d::Work> issueOnStream(c10d::OpType type, std::vector<at::Tensor> outputs,
                                               const at::Device& device, const OpRun& run);

  slimecclComm_t comm_;
  int rank_;
  std::mutex mutex_;  // issue order, the batch
  Batch batch_;
  uint64_t batchId_ = 0;
  at::Device lastDevice_ = at::Device(at::kCPU);  // of the last op issued
  std::mutex streamIssue_;                        // one op on CUDA tensors at a time
  std::unique_ptr<OpQueue> queue_;
};

}  // namespace slimeccl_torch
