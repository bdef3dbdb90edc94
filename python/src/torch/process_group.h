// torch.distributed's backend "slimeccl": a c10d::Backend (PyTorch 2; a c10d::ProcessGroup in
// PyTorch 1) whose ops run on one slimeccl communicator in the order they were issued: on CPU
// tensors on a worker thread of the group, on CUDA tensors on torch's current stream
// (docs/python.md).
// Send and Recv wait in a batch until a wait on one of them, a collective, or the end of
// batch_isend_irecv, and then run as one slimeccl group: two ranks that each isend then irecv
// meet however large the tensors.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include <chrono>
#include <memory>

#include "slimeccl.h"

namespace slimeccl_torch {

class Engine;

#if TORCH_VERSION_MAJOR >= 2
// PyTorch 2 wraps it in a ProcessGroup of its own, as the backend of both the CPU and CUDA.
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

class ProcessGroupSlimeccl : public BackendBase {
 public:
  // Rank 0 makes the unique id and puts it in the store; the others read it there. The timeout
  // bounds init and every op (the communicator's timeoutMs).
  ProcessGroupSlimeccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout);
  ~ProcessGroupSlimeccl() override;

  static c10::intrusive_ptr<BackendBase> create(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                std::chrono::duration<float> timeout);

  const std::string getBackendName() const override { return "slimeccl"; }
  // How this rank's last started op of the communicator ran.
  slimecclOpRoute lastOpRoute() const;

  // Ops between the two issue as they come, Send/Recv in one batch, as outside.
  void startCoalescing() override {}
#if TORCH_VERSION_MAJOR >= 2
  bool supportsCoalescing() const override { return true; }
  // Issues the batch; the Work completes once every op issued so far has.
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
#else
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;
#endif

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  std::shared_ptr<Engine> engine_;
};

}  // namespace slimeccl_torch
