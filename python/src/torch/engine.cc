#include "engine.h"

#include <c10/util/Exception.h>

#include <stdexcept>
#include <string>

#include "tensor_args.h"

namespace slimeccl_torch {

Engine::Engine(slimecclComm_t comm, int rank) : comm_(comm), rank_(rank), queue_(std::make_unique<OpQueue>()) {}

Engine::~Engine() {
  try {
    flush();
  } catch (const std::exception&) {
    // A batch that fails as the group goes away has its Works failed already.
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

CallOperator::CallOperator(const Engine& engine, const Reduction& reduction, slimecclDataType_t type)
    : engine_(engine), op_(reduction.op) {
  if (!reduction.premulScalar.defined()) return;
  const slimecclScalarResidence_t residence =
      reduction.premulScalar.is_cpu() ? slimecclScalarHostImmediate : slimecclScalarDevice;
  engine_.check(slimecclRedOpCreatePreMulSum(&op_, reduction.premulScalar.data_ptr(), type, residence, engine_.comm()));
  made_ = true;
}

CallOperator::~CallOperator() {
  if (made_) slimecclRedOpDestroy(op_, engine_.comm());
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
                                             const at::Device& device, OpRun run) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lastDevice_ = device;
  }
  if (!device.is_cpu()) return issueOnStream(type, std::move(outputs), device, run);
  auto work = c10::make_intrusive<SlimecclWork>(rank_, type, std::move(outputs), weak_from_this());
  flush();
  std::lock_guard<std::mutex> lock(mutex_);
  queue_->push(OpQueue::Job{[run = std::move(run)] { run(nullptr); }, {work}, {}});
  return work;
}

c10::intrusive_ptr<c10d::Work> Engine::pointToPoint(bool send, const at::Tensor& tensor, int peer) {
  const std::string label = opLabel(rank_, send ? "Send" : "Recv");
  typeOf(tensor, label);
  PointToPoint op{send, tensor.contiguous(), {}, peer};
  if (!send && !op.wire.is_same(tensor)) op.target = tensor;
  const c10d::OpType type = send ? c10d::OpType::SEND : c10d::OpType::RECV;
  std::optional<Batch> other;
  c10::intrusive_ptr<c10d::Work> work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A batch is one slimeccl group on one device's stream.
    if (!batch_.ops.empty() && batch_.device != tensor.device()) other = takeBatchLocked();
    batch_.device = lastDevice_ = tensor.device();
    if (tensor.is_cpu()) {
      auto cpuWork =
          c10::make_intrusive<SlimecclWork>(rank_, type, std::vector<at::Tensor>{tensor}, weak_from_this(), batchId_);
      batch_.works.push_back(cpuWork);
      work = cpuWork;
    } else {
#ifdef SLIMECCL_TORCH_CUDA
      if (!batch_.point) batch_.point = makeStreamPoint(tensor.device());
      work =
          makeStreamWork(rank_, type, std::vector<at::Tensor>{tensor}, batch_.point, comm_, weak_from_this(), batchId_);
#endif
    }
    batch_.ops.push_back(std::move(op));
  }
  issueTaken(std::move(other));
  return work;
}

void Engine::flush() {
  std::optional<Batch> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken = takeBatchLocked();
  }
  issueTaken(std::move(taken));
}

c10::intrusive_ptr<c10d::Work> Engine::fence(c10d::OpType type) {
  at::Device device = at::Device(at::kCPU);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    device = lastDevice_;
  }
  // Host ops run one after another, and ops on CUDA tensors all go on torch's current stream.
  return queue(type, {}, device, [](slimecclStream_t) {});
}

void Engine::issueBatch(uint64_t batch) {
  std::optional<Batch> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch == batchId_) taken = takeBatchLocked();
  }
  issueTaken(std::move(taken));
}

std::optional<Engine::Batch> Engine::takeBatchLocked() {
  if (batch_.ops.empty()) return std::nullopt;
  ++batchId_;
  Batch taken = std::move(batch_);
  batch_ = Batch{};
  if (!taken.device.is_cpu()) return taken;
  auto ops = std::make_shared<std::vector<PointToPoint>>(std::move(taken.ops));
  queue_->push(OpQueue::Job{[this, ops] { runBatch(*ops, nullptr); }, std::move(taken.works), {}});
  return std::nullopt;
}

void Engine::runBatch(const std::vector<PointToPoint>& ops, slimecclStream_t stream) {
  GroupRun group(*this);
  for (const PointToPoint& op : ops) {
    at::Tensor wire = wireView(op.wire);
    const slimecclDataType_t type = typeOf(wire, opLabel(rank_, op.send ? "Send" : "Recv"));
    const size_t count = static_cast<size_t>(wire.numel());
    group.call(op.send ? slimecclSend(wire.data_ptr(), count, type, op.peer, comm_, stream)
                       : slimecclRecv(wire.data_ptr(), count, type, op.peer, comm_, stream));
  }
  group.end();
  for (const PointToPoint& op : ops)
    if (op.target.defined()) op.target.copy_(op.wire);
}

#ifdef SLIMECCL_TORCH_CUDA

void Engine::runOnStream(StreamPoint& point, const at::Device& device, const OpRun& run) {
  queue_->drain();
  std::lock_guard<std::mutex> issue(streamIssue_);
  try {
    run(currentStreamOf(device));
  } catch (...) {
    failStreamPoint(point, std::current_exception());
    throw;
  }
  markStreamPoint(point);
}

void Engine::issueTaken(std::optional<Batch> batch) {
  if (!batch) return;
  runOnStream(*batch->point, batch->device, [&](slimecclStream_t stream) { runBatch(batch->ops, stream); });
}

c10::intrusive_ptr<c10d::Work> Engine::issueOnStream(c10d::OpType type, std::vector<at::Tensor> outputs,
                                                     const at::Device& device, const OpRun& run) {
  flush();
  std::shared_ptr<StreamPoint> point = makeStreamPoint(device);
  c10::intrusive_ptr<c10d::Work> work = makeStreamWork(rank_, type, std::move(outputs), point, comm_, weak_from_this());
  runOnStream(*point, device, run);
  return work;
}

#else

// Without the CUDA half, typeOf refuses every tensor that is not on the CPU before an op is made.
void Engine::issueTaken(std::optional<Batch> batch) {
  TORCH_CHECK(!batch, opLabel(rank_, "Send/Recv"), ": this build of the slimeccl backend takes CPU tensors");
}

c10::intrusive_ptr<c10d::Work> Engine::issueOnStream(c10d::OpType, std::vector<at::Tensor>, const at::Device& device,
                                                     const OpRun&) {
  TORCH_CHECK(false, opLabel(rank_, "op"), ": the tensors are on ", device,
              "; this build of the slimeccl backend takes CPU tensors");
}

#endif

}  // namespace slimeccl_torch
