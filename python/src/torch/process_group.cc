#include "process_group.h"

#include <c10/util/Exception.h>

#include <cstring>

#include "engine.h"
#include "tensor_args.h"

namespace slimeccl_torch {
namespace {

constexpr const char* kUniqueIdKey = "slimeccl_unique_id";

// A tensor slimeccl writes: `wire` is contiguous; `target`, when defined, is the caller's
// non-contiguous tensor that gets the result once the op is done.
struct Output {
  at::Tensor wire;
  at::Tensor target;
  void land() const {
    if (target.defined()) target.copy_(wire);
  }
};

Output outputFor(const at::Tensor& t) {
  at::Tensor wire = t.contiguous();
  return Output{wire, wire.is_same(t) ? at::Tensor() : t};
}

// The bytes slimeccl moves for a contiguous tensor: complex tensors as their real pairs.
struct Wire {
  void* data;
  size_t count;
  slimecclDataType_t type;
};

Wire wireOf(const at::Tensor& t, const std::string& label) {
  at::Tensor real = wireView(t);
  return Wire{real.data_ptr(), static_cast<size_t>(real.numel()), typeOf(real, label)};
}

void sameKind(const at::Tensor& a, const at::Tensor& b, const std::string& label) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), label, ": tensors of ", a.scalar_type(), " and ", b.scalar_type(),
              " do not match");
  TORCH_CHECK(a.device() == b.device(), label, ": tensors on ", a.device(), " and ", b.device(), " do not match");
}

void checkRank(int rank, int size, const std::string& label, const char* what) {
  TORCH_CHECK(rank >= 0 && rank < size, label, ": ", what, " ", rank, " is not a rank of this group of ", size);
}

// One flat tensor holding the list's tensors one after another.
at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive pieces of flat back into the list's tensors.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  int64_t offset = 0;
  for (at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
}

slimecclComm_t joinComm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                        std::chrono::milliseconds timeout) {
  slimecclUniqueId id;
  if (rank == 0) {
    slimecclResult_t rc = slimecclGetUniqueId(&id);
    TORCH_CHECK(rc == slimecclSuccess, opLabel(rank, "init"), ": ", slimecclGetLastError(nullptr));
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof(id.internal), opLabel(rank, "init"), ": the store holds a unique id of ",
                bytes.size(), " bytes where ", sizeof(id.internal), " are expected");
    memcpy(id.internal, bytes.data(), sizeof(id.internal));
  }
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.timeoutMs = static_cast<int>(std::min<int64_t>(timeout.count(), INT32_MAX));
  slimecclComm_t comm = nullptr;
  slimecclResult_t rc = slimecclCommInitRankConfig(&comm, size, id, rank, &config);
  TORCH_CHECK(rc == slimecclSuccess, opLabel(rank, "init"), ": ", slimecclGetLastError(nullptr));
  return comm;
}

}  // namespace

ProcessGroupSlimeccl::ProcessGroupSlimeccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                           std::chrono::milliseconds timeout)
    : BackendBase(rank, size), engine_(std::make_shared<Engine>(joinComm(store, rank, size, timeout), rank)) {
  init();
}

ProcessGroupSlimeccl::~ProcessGroupSlimeccl() = default;

c10::intrusive_ptr<BackendBase> ProcessGroupSlimeccl::create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                             int size, std::chrono::duration<float> timeout) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  return c10::make_intrusive<ProcessGroupSlimeccl>(store, rank, size, ms);
}

slimecclOpRoute ProcessGroupSlimeccl::lastOpRoute() const {
  slimecclOpRoute route{};
  engine_->check(slimecclCommGetLastOpRoute(engine_->comm(), &route));
  return route;
}

#if TORCH_VERSION_MAJOR >= 2
c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::endCoalescing() { return engine_->fence(c10d::OpType::COALESCED); }
#else
void ProcessGroupSlimeccl::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>&) { engine_->flush(); }
#endif

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::broadcast(std::vector<at::Tensor>& tensors,
                                                               const c10d::BroadcastOptions& opts) {
  const std::string label = opLabel(rank_, "Broadcast");
  const at::Tensor& t = onlyTensor(tensors, label);
  checkRank(static_cast<int>(opts.rootRank), size_, label, "root");
  Output out = outputFor(t);
  Wire w = wireOf(out.wire, label);
  const int root = static_cast<int>(opts.rootRank);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::BROADCAST, tensors, t.device(), [e, out, w, root](slimecclStream_t stream) {
    e->check(slimecclBroadcast(w.data, w.data, w.count, w.type, root, e->comm(), stream));
    out.land();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::allreduce(std::vector<at::Tensor>& tensors,
                                                               const c10d::AllreduceOptions& opts) {
  const std::string label = opLabel(rank_, "AllReduce");
  const at::Tensor& t = onlyTensor(tensors, label);
  const Reduction red = reductionOf(opts.reduceOp, t, label);
  Output out = outputFor(t);
  Wire w = wireOf(out.wire, label);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::ALLREDUCE, tensors, t.device(), [e, out, w, red](slimecclStream_t stream) {
    CallOperator op(*e, red, w.type);
    e->check(slimecclAllReduce(w.data, w.data, w.count, w.type, op.op(), e->comm(), stream));
    out.land();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                         const c10d::AllreduceCoalescedOptions& opts) {
  const std::string label = opLabel(rank_, "AllReduce (coalesced)");
  TORCH_CHECK(!tensors.empty(), label, ": no tensors");
  for (const at::Tensor& t : tensors) sameKind(t, tensors[0], label);
  const Reduction red = reductionOf(opts.reduceOp, tensors[0], label);
  at::Tensor flat = flatten(tensors);
  Wire w = wireOf(flat, label);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::ALLREDUCE_COALESCED, tensors, tensors[0].device(),
                        [e, flat, w, red, tensors](slimecclStream_t stream) mutable {
                          CallOperator op(*e, red, w.type);
                          e->check(slimecclAllReduce(w.data, w.data, w.count, w.type, op.op(), e->comm(), stream));
                          unflatten(flat, tensors);
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::reduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::ReduceOptions& opts) {
  const std::string label = opLabel(rank_, "Reduce");
  const at::Tensor& t = onlyTensor(tensors, label);
  checkRank(static_cast<int>(opts.rootRank), size_, label, "root");
  const Reduction red = reductionOf(opts.reduceOp, t, label);
  Output out = outputFor(t);
  Wire w = wireOf(out.wire, label);
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = root == rank_;
  Engine* e = engine_.get();
  return engine_->queue(
      c10d::OpType::REDUCE, tensors, t.device(), [e, out, w, red, root, isRoot](slimecclStream_t stream) {
        CallOperator op(*e, red, w.type);
        e->check(slimecclReduce(w.data, isRoot ? w.data : nullptr, w.count, w.type, op.op(), root, e->comm(), stream));
        if (isRoot) out.land();
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                               std::vector<at::Tensor>& inputs,
                                                               const c10d::AllgatherOptions&) {
  const std::string label = opLabel(rank_, "AllGather");
  const at::Tensor& in = onlyTensor(inputs, label);
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_), label, ": takes one list of ",
              size_, " output tensors");
  for (const at::Tensor& o : outputs[0]) {
    sameKind(o, in, label);
    TORCH_CHECK(o.numel() == in.numel(), label, ": an output tensor of ", o.numel(), " elements for an input of ",
                in.numel());
  }
  at::Tensor send = in.contiguous();
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  Wire s = wireOf(send, label), r = wireOf(flat, label);
  std::vector<at::Tensor> list = outputs[0];
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::ALLGATHER, list, in.device(),
                        [e, send, flat, s, r, list](slimecclStream_t stream) mutable {
                          e->check(slimecclAllGather(s.data, r.data, s.count, s.type, e->comm(), stream));
                          unflatten(flat, list);
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::AllgatherOptions&) {
  const std::string label = opLabel(rank_, "AllGather");
  sameKind(output, input, label);
  TORCH_CHECK(output.numel() == size_ * input.numel(), label, ": the output holds ", output.numel(), " elements where ",
              size_, " x ", input.numel(), " are needed");
  at::Tensor send = input.contiguous();
  Output out = outputFor(output);
  Wire s = wireOf(send, label), r = wireOf(out.wire, label);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::_ALLGATHER_BASE, {output}, input.device(),
                        [e, send, out, s, r](slimecclStream_t stream) {
                          e->check(slimecclAllGather(s.data, r.data, s.count, s.type, e->comm(), stream));
                          out.land();
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::GatherOptions& opts) {
  const std::string label = opLabel(rank_, "Gather");
  const at::Tensor& in = onlyTensor(inputs, label);
  const int root = static_cast<int>(opts.rootRank);
  checkRank(root, size_, label, "root");
  std::vector<at::Tensor> list;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_), label,
                ": the root takes one list of ", size_, " output tensors");
    for (const at::Tensor& o : outputs[0]) {
      sameKind(o, in, label);
      TORCH_CHECK(o.numel() == in.numel(), label, ": an output tensor of ", o.numel(), " elements for an input of ",
                  in.numel());
    }
    list = outputs[0];
  }
  at::Tensor send = in.contiguous();
  at::Tensor flat = rank_ == root ? at::empty({size_ * in.numel()}, in.options()) : at::Tensor();
  Engine* e = engine_.get();
  const int rank = rank_, size = size_;
  return engine_->queue(c10d::OpType::GATHER, list, in.device(),
                        [e, send, flat, list, root, rank, size, label](slimecclStream_t stream) mutable {
                          Wire s = wireOf(send, label);
                          const size_t bytes = static_cast<size_t>(send.numel()) * send.element_size();
                          GroupRun group(*e);
                          if (rank == root) {
                            char* base = static_cast<char*>(flat.data_ptr());
                            for (int p = 0; p < size; ++p)
                              if (p != root)
                                group.call(slimecclRecv(base + p * bytes, s.count, s.type, p, e->comm(), stream));
                            flat.narrow(0, root * send.numel(), send.numel()).copy_(send.reshape({-1}));
                          } else {
                            group.call(slimecclSend(s.data, s.count, s.type, root, e->comm(), stream));
                          }
                          group.end();
                          if (rank == root) unflatten(flat, list);
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::scatter(std::vector<at::Tensor>& outputs,
                                                             std::vector<std::vector<at::Tensor>>& inputs,
                                                             const c10d::ScatterOptions& opts) {
  const std::string label = opLabel(rank_, "Scatter");
  const at::Tensor& out = onlyTensor(outputs, label);
  const int root = static_cast<int>(opts.rootRank);
  checkRank(root, size_, label, "root");
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_), label,
                ": the root takes one list of ", size_, " input tensors");
    for (const at::Tensor& i : inputs[0]) {
      sameKind(i, out, label);
      TORCH_CHECK(i.numel() == out.numel(), label, ": an input tensor of ", i.numel(), " elements for an output of ",
                  out.numel());
    }
    flat = flatten(inputs[0]);
  }
  Output o = outputFor(out);
  Engine* e = engine_.get();
  const int rank = rank_, size = size_;
  return engine_->queue(c10d::OpType::SCATTER, outputs, out.device(),
                        [e, flat, o, root, rank, size, label](slimecclStream_t stream) {
                          Wire r = wireOf(o.wire, label);
                          const size_t bytes = static_cast<size_t>(o.wire.numel()) * o.wire.element_size();
                          GroupRun group(*e);
                          if (rank == root) {
                            const char* base = static_cast<const char*>(flat.data_ptr());
                            for (int p = 0; p < size; ++p)
                              if (p != root)
                                group.call(slimecclSend(base + p * bytes, r.count, r.type, p, e->comm(), stream));
                            o.wire.view({-1}).copy_(flat.narrow(0, root * o.wire.numel(), o.wire.numel()));
                          } else {
                            group.call(slimecclRecv(r.data, r.count, r.type, root, e->comm(), stream));
                          }
                          group.end();
                          o.land();
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                                    const c10d::ReduceScatterOptions& opts) {
  const std::string label = opLabel(rank_, "ReduceScatter");
  const at::Tensor& out = onlyTensor(outputs, label);
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_), label, ": takes one list of ",
              size_, " input tensors");
  for (const at::Tensor& i : inputs[0]) {
    sameKind(i, out, label);
    TORCH_CHECK(i.numel() == out.numel(), label, ": an input tensor of ", i.numel(), " elements for an output of ",
                out.numel());
  }
  const Reduction red = reductionOf(opts.reduceOp, out, label);
  at::Tensor flat = flatten(inputs[0]);
  Output o = outputFor(out);
  Wire s = wireOf(flat, label), r = wireOf(o.wire, label);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::REDUCE_SCATTER, outputs, out.device(),
                        [e, flat, o, s, r, red](slimecclStream_t stream) {
                          CallOperator op(*e, red, r.type);
                          e->check(slimecclReduceScatter(s.data, r.data, r.count, r.type, op.op(), e->comm(), stream));
                          o.land();
                        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                          const c10d::ReduceScatterOptions& opts) {
  const std::string label = opLabel(rank_, "ReduceScatter");
  sameKind(output, input, label);
  TORCH_CHECK(input.numel() == size_ * output.numel(), label, ": the input holds ", input.numel(), " elements where ",
              size_, " x ", output.numel(), " are needed");
  const Reduction red = reductionOf(opts.reduceOp, output, label);
  at::Tensor send = input.contiguous();
  Output o = outputFor(output);
  Wire s = wireOf(send, label), r = wireOf(o.wire, label);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, output.device(),
                        [e, send, o, s, r, red](slimecclStream_t stream) {
                          CallOperator op(*e, red, r.type);
                          e->check(slimecclReduceScatter(s.data, r.data, r.count, r.type, op.op(), e->comm(), stream));
                          o.land();
                        });
}

namespace {

// Element offsets and counts of each rank's rows along dim 0: `splits` rows each, or equal
// blocks when empty.
void blocksOf(const at::Tensor& t, const std::vector<int64_t>& splits, int size, const std::string& label,
              const char* what, std::vector<int64_t>* offsets, std::vector<int64_t>* counts) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t perRow = rows == 0 ? 0 : t.numel() / rows;
  offsets->assign(size, 0);
  counts->assign(size, 0);
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, label, ": the ", what, " tensor's ", rows, " rows do not split into ", size,
                " equal blocks");
    for (int p = 0; p < size; ++p) {
      (*counts)[p] = rows / size * perRow;
      (*offsets)[p] = p * (*counts)[p];
    }
    return;
  }
  TORCH_CHECK(splits.size() == static_cast<size_t>(size), label, ": ", splits.size(), " ", what, " splits for ", size,
              " ranks");
  int64_t at = 0;
  for (int p = 0; p < size; ++p) {
    TORCH_CHECK(splits[p] >= 0, label, ": a negative ", what, " split");
    (*offsets)[p] = at * perRow;
    (*counts)[p] = splits[p] * perRow;
    at += splits[p];
  }
  TORCH_CHECK(at == rows, label, ": the ", what, " splits add up to ", at, " rows of ", rows);
}

// Sends block p of send to rank p and receives rank p's into block p of recv, for every p (both
// contiguous), on `stream`.
void exchangeBlocks(Engine& e, slimecclStream_t stream, int rank, int size, const at::Tensor& send,
                    const std::vector<int64_t>& sendOffsets, const std::vector<int64_t>& sendCounts,
                    const at::Tensor& recv, const std::vector<int64_t>& recvOffsets,
                    const std::vector<int64_t>& recvCounts, const std::string& label) {
  const slimecclDataType_t type = typeOf(send, label);
  const int64_t elem = send.element_size();
  const char* s = static_cast<const char*>(send.data_ptr());
  char* r = static_cast<char*>(recv.data_ptr());
  GroupRun group(e);
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    group.call(slimecclSend(s + sendOffsets[p] * elem, sendCounts[p], type, p, e.comm(), stream));
    group.call(slimecclRecv(r + recvOffsets[p] * elem, recvCounts[p], type, p, e.comm(), stream));
  }
  recv.view({-1})
      .narrow(0, recvOffsets[rank], recvCounts[rank])
      .copy_(send.view({-1}).narrow(0, sendOffsets[rank], sendCounts[rank]));
  group.end();
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                   std::vector<int64_t>& outputSplits,
                                                                   std::vector<int64_t>& inputSplits,
                                                                   const c10d::AllToAllOptions&) {
  const std::string label = opLabel(rank_, "AlltoAll");
  sameKind(output, input, label);
  at::Tensor send = wireView(input.contiguous());
  Output o = outputFor(output);
  at::Tensor recv = wireView(o.wire);
  std::vector<int64_t> sendOffsets, sendCounts, recvOffsets, recvCounts;
  blocksOf(send, inputSplits, size_, label, "input", &sendOffsets, &sendCounts);
  blocksOf(recv, outputSplits, size_, label, "output", &recvOffsets, &recvCounts);
  const bool even = inputSplits.empty() && outputSplits.empty();
  TORCH_CHECK(sendCounts[rank_] == recvCounts[rank_], label, ": this rank sends itself ", sendCounts[rank_],
              " elements but expects ", recvCounts[rank_]);
  Engine* e = engine_.get();
  const int rank = rank_, size = size_;
  return engine_->queue(c10d::OpType::ALLTOALL_BASE, {output}, output.device(), [=](slimecclStream_t stream) {
    if (even) {
      Wire s = wireOf(send, label), r = wireOf(recv, label);
      e->check(slimecclAlltoAll(s.data, r.data, s.count / size, s.type, e->comm(), stream));
    } else {
      exchangeBlocks(*e, stream, rank, size, send, sendOffsets, sendCounts, recv, recvOffsets, recvCounts, label);
    }
    o.land();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::alltoall(std::vector<at::Tensor>& outputs,
                                                              std::vector<at::Tensor>& inputs,
                                                              const c10d::AllToAllOptions&) {
  const std::string label = opLabel(rank_, "AlltoAll");
  TORCH_CHECK(inputs.size() == static_cast<size_t>(size_) && outputs.size() == static_cast<size_t>(size_), label,
              ": takes ", size_, " input and ", size_, " output tensors");
  for (int p = 0; p < size_; ++p) {
    sameKind(outputs[p], inputs[0], label);
    sameKind(inputs[p], inputs[0], label);
  }
  TORCH_CHECK(inputs[rank_].numel() == outputs[rank_].numel(), label, ": this rank sends itself ",
              inputs[rank_].numel(), " elements but expects ", outputs[rank_].numel());
  at::Tensor send = wireView(flatten(inputs));
  int64_t received = 0;
  for (const at::Tensor& o : outputs) received += o.numel();
  at::Tensor recvFlat = wireView(at::empty({received}, outputs[0].options()));
  std::vector<at::Tensor> outs = outputs;
  std::vector<int64_t> sendOffsets(size_), sendCounts(size_), recvOffsets(size_), recvCounts(size_);
  const int64_t scale = inputs[0].is_complex() ? 2 : 1;
  for (int64_t p = 0, s = 0, r = 0; p < size_; ++p) {
    sendOffsets[p] = s;
    sendCounts[p] = inputs[p].numel() * scale;
    s += sendCounts[p];
    recvOffsets[p] = r;
    recvCounts[p] = outputs[p].numel() * scale;
    r += recvCounts[p];
  }
  Engine* e = engine_.get();
  const int rank = rank_, size = size_;
  return engine_->queue(c10d::OpType::ALLTOALL, outputs, inputs[0].device(), [=](slimecclStream_t stream) mutable {
    exchangeBlocks(*e, stream, rank, size, send, sendOffsets, sendCounts, recvFlat, recvOffsets, recvCounts, label);
    unflatten(outs[0].is_complex() ? at::view_as_complex(recvFlat.view({-1, 2})) : recvFlat, outs);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
  const std::string label = opLabel(rank_, "Send");
  checkRank(dstRank, size_, label, "peer");
  return engine_->pointToPoint(true, onlyTensor(tensors, label), dstRank);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
  const std::string label = opLabel(rank_, "Recv");
  checkRank(srcRank, size_, label, "peer");
  return engine_->pointToPoint(false, onlyTensor(tensors, label), srcRank);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSlimeccl::barrier(const c10d::BarrierOptions&) {
  at::Tensor token = at::zeros({1}, at::kInt);
  Engine* e = engine_.get();
  return engine_->queue(c10d::OpType::BARRIER, {}, at::Device(at::kCPU), [e, token](slimecclStream_t stream) {
    e->check(slimecclAllReduce(token.data_ptr(), token.data_ptr(), 1, slimecclInt32, slimecclSum, e->comm(), stream));
  });
}

}  // namespace slimeccl_torch
