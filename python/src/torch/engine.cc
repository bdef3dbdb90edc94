#include "engine.h"

#include <stdexcept>
#include <string>

#include "tensor_args.h"

namespace slimeccl_torch {

Engine::Engine(slimecclComm_t comm, int rank) : comm_(comm), rank_(rank), queue_(std::make_unique<OpQueue>()) {}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    flushLocked();
  }
  queue_.reset();
  slimecclCommDestroy(comm_);
}

GroupRun::GroupRun(const Engine& engine) : engine_(engine) { engine_.check(slimecclGroupStart()); }

void GroupRun::call(slimecclResult_t rc) {
  if (rc == slimecclSuccess || failed_ != slimecclSuccess) return;
  failed_ = rc;
  sentence_ = slimecclGetLastError(engine_.comm());
}

void GroupRun::end() {
  slimecclResult_t ended = slimecclGroupEnd();
  if (failed_ != slimecclSuccess) engine_.fail(failed_, sentence_);
  engine_.check(ended);
}

void Engine::check(slimecclResult_t rc) const {
  if (rc == slimecclSuccess) return;
  const char* sentence = slimecclGetLastError(comm_);
  fail(rc, sentence != nullptr ? sentence : "");
}

void Engine::fail(slimecclResult_t rc, const std::string& sentence) const {
  throw std::runtime_error(std::string("slimeccl: ") + slimecclGetErrorString(rc) + ": " + sentence);
}

c10::intrusive_ptr<c10d::Work> Engine::queue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                             std::function<void()> run) {
  auto work = c10::make_intrusive<SlimecclWork>(rank_, type, std::move(outputs), weak_from_this());
  std::lock_guard<std::mutex> lock(mutex_);
  flushLocked();
  queue_->push(OpQueue::Job{std::move(run), {work}, {}});
  return work;
}

c10::intrusive_ptr<c10d::Work> Engine::pointToPoint(bool send, const at::Tensor& tensor, int peer) {
  const std::string label = opLabel(rank_, send ? "Send" : "Recv");
  typeOf(tensor, label);
  PointToPoint op{send, tensor.contiguous(), {}, peer};
  if (!send && !op.wire.is_same(tensor)) op.target = tensor;
  std::lock_guard<std::mutex> lock(mutex_);
  auto work = c10::make_intrusive<SlimecclWork>(rank_, send ? c10d::OpType::SEND : c10d::OpType::RECV,
                                                std::vector<at::Tensor>{tensor}, weak_from_this(), batchId_);
  batch_.push_back(std::move(op));
  batchWorks_.push_back(work);
  return work;
}

void Engine::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  flushLocked();
}

void Engine::issueBatch(uint64_t batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (batch == batchId_) flushLocked();
}

void Engine::flushLocked() {
  if (batch_.empty()) return;
  ++batchId_;
  auto ops = std::make_shared<std::vector<PointToPoint>>(std::move(batch_));
  batch_.clear();
  auto run = [this, ops] {
    GroupRun group(*this);
    for (const PointToPoint& op : *ops) {
      at::Tensor wire = wireView(op.wire);
      const slimecclDataType_t type = typeOf(wire, opLabel(rank_, op.send ? "Send" : "Recv"));
      const size_t count = static_cast<size_t>(wire.numel());
      group.call(op.send ? slimecclSend(wire.data_ptr(), count, type, op.peer, comm_, nullptr)
                         : slimecclRecv(wire.data_ptr(), count, type, op.peer, comm_, nullptr));
    }
    group.end();
    for (const PointToPoint& op : *ops)
      if (op.target.defined()) op.target.copy_(op.wire);
  };
  queue_->push(OpQueue::Job{std::move(run), std::move(batchWorks_), {}});
  batchWorks_.clear();
}

}  // namespace slimeccl_torch
