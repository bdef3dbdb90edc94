#include "stream_work.h"

#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace slimeccl_torch {
namespace {

std::mutex streamsMutex;

}  // namespace

slimecclStream_t currentStreamOf(const at::Device& device) {
  static auto* streams = new std::map<cudaStream_t, slimecclStream_t>;
  const cudaStream_t cuda = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  std::lock_guard<std::mutex> lock(streamsMutex);
  auto it = streams->find(cuda);
  if (it != streams->end()) return it->second;
  slimecclStream_t made = nullptr;
  const slimecclResult_t rc = slimecclStreamCreateFromCuda(&made, cuda);
  TORCH_CHECK(rc == slimecclSuccess, "slimeccl: a stream in the order of torch's current CUDA stream on ", device, ": ",
              slimecclGetLastError(nullptr));
  streams->emplace(cuda, made);
  return made;
}

class StreamPoint {
 public:
  explicit StreamPoint(const at::Device& device) : device_(device), event_(c10::DeviceType::CUDA) {}

  void addFuture(c10::intrusive_ptr<c10::ivalue::Future> future, std::vector<at::Tensor> outputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    futures_.push_back({std::move(future), std::move(outputs)});
  }

  void mark() {
    std::lock_guard<std::mutex> lock(mutex_);
    event_.record(c10::cuda::getCurrentCUDAStream(device_.index()));
    marked_ = true;
    for (auto& [future, outputs] : futures_) future->markCompleted(c10::IValue(outputs));
    futures_.clear();
  }

  void fail(std::exception_ptr failure) {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = failure;
    for (auto& [future, outputs] : futures_) future->setError(failure);
    futures_.clear();
  }

  bool marked() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return marked_;
  }
  std::exception_ptr failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  bool passed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return marked_ && event_.query();
  }
  // The caller's current stream waits for the point.
  void blockCurrentStream() const {
    std::lock_guard<std::mutex> lock(mutex_);
    event_.block(c10::cuda::getCurrentCUDAStream(device_.index()));
  }
  const at::Device& device() const { return device_; }

 private:
  const at::Device device_;
  mutable std::mutex mutex_;
  c10::Event event_;
  bool marked_ = false;
  std::exception_ptr failure_;
  std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Future>, std::vector<at::Tensor>>> futures_;
};

std::shared_ptr<StreamPoint> makeStreamPoint(const at::Device& device) { return std::make_shared<StreamPoint>(device); }

void markStreamPoint(StreamPoint& point) { point.mark(); }

void failStreamPoint(StreamPoint& point, std::exception_ptr failure) { point.fail(failure); }

namespace {

class StreamWork : public c10d::Work {
 public:
  StreamWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::shared_ptr<StreamPoint> point,
             slimecclComm_t comm, std::weak_ptr<WorkOwner> owner, std::optional<uint64_t> batch)
      : c10d::Work(rank, type), outputs_(std::move(outputs)), point_(std::move(point)), comm_(comm),
        owner_(std::move(owner)), batch_(batch), future_(c10::make_intrusive<c10::ivalue::Future>(
                                                     tensorListType(), std::vector<c10::Device>{point_->device()})) {
    point_->addFuture(future_, outputs_);
  }

  bool isCompleted() override {
    issueBatch();
    return failure() != nullptr || point_->passed();
  }
  bool isSuccess() const override { return failure() == nullptr; }
  std::exception_ptr exception() const override { return failure(); }

  bool wait(std::chrono::milliseconds) override {
    issueBatch();
    if (std::exception_ptr failed = failure()) std::rethrow_exception(failed);
    point_->blockCurrentStream();
    return true;
  }
  void synchronize() override { wait(kNoTimeout); }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  void issueBatch() {
    if (!batch_ || point_->marked()) return;
    if (auto owner = owner_.lock()) owner->issueBatch(*batch_);
  }
  std::exception_ptr failure() const {
    if (std::exception_ptr failed = point_->failure()) return failed;
    return commFailure();
  }
  // The comm failed after the op was queued (a peer died, calls did not match): the stream was let
  // go, and what the op wrote is not its result.
  std::exception_ptr commFailure() const {
    slimecclResult_t async = slimecclSuccess;
    if (slimecclCommGetAsyncError(comm_, &async) != slimecclSuccess || async == slimecclSuccess) return nullptr;
    const char* sentence = slimecclGetLastError(comm_);
    return std::make_exception_ptr(std::runtime_error(std::string("slimeccl: rank ") + std::to_string(rank_) + ": " +
                                                      slimecclGetErrorString(async) + ": " +
                                                      (sentence != nullptr ? sentence : "")));
  }

  std::vector<at::Tensor> outputs_;
  std::shared_ptr<StreamPoint> point_;
  slimecclComm_t comm_;
  std::weak_ptr<WorkOwner> owner_;
  std::optional<uint64_t> batch_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace

c10::intrusive_ptr<c10d::Work> makeStreamWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                                              std::shared_ptr<StreamPoint> point, slimecclComm_t comm,
                                              std::weak_ptr<WorkOwner> owner, std::optional<uint64_t> batch) {
  return c10::make_intrusive<StreamWork>(rank, type, std::move(outputs), std::move(point), comm, std::move(owner),
                                         batch);
}

}  // namespace slimeccl_torch
