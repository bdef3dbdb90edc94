// AllGather (BASELINE_OP_SENDRECV: Send/Recv) measured with Gloo over its TCP transport on the
// loopback, the path PyTorch's CPU process group takes. Ranks come from slimeccl-run (or mpirun)
// variables; they meet through a file store in GLOO_PERF_STORE (default: a directory in /tmp named
// after SLIMECCL_COMM_ID, which slimeccl-run gives every process).
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "baseline_driver.h"
#include "common/process_env.h"
#include "common/usage_error.h"

namespace {

std::string storeDirectory() {
  if (const char* dir = getenv("GLOO_PERF_STORE")) return dir;
  std::string id = getenv("SLIMECCL_COMM_ID") ? getenv("SLIMECCL_COMM_ID") : "single";
  for (char& c : id)
    if (c == ':' || c == '/' || c == '[' || c == ']') c = '_';
  return "/tmp/gloo-perf-" + id;
}

class GlooLibrary final : public slimeccl_perf::BaselineLibrary {
 public:
  GlooLibrary(int rank, int size) : rank_(rank), size_(size) {
    const std::string dir = storeDirectory();
    mkdir(dir.c_str(), 0700);
    gloo::rendezvous::FileStore store(dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->connectFullMesh(store, device);
    context_ = context;
    // Once every rank is connected the keys have served: a later run with the same id must not
    // find them (the store refuses a key that exists).
    barrier();
    if (rank_ == 0) std::filesystem::remove_all(dir);
  }
  int rank() const override { return rank_; }
  int nranks() const override { return size_; }
  std::string host() const override {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    return name;
  }
  void allGather(const float* send, float* recv, size_t count) override {
    gloo::AllgatherOptions opts(context_);
    if (send != recv + static_cast<size_t>(rank_) * count) opts.setInput(const_cast<float*>(send), count);
    opts.setOutput(recv, count * static_cast<size_t>(size_));
    gloo::allgather(opts);
  }
  void sendRecv(const float* send, float* recv, size_t count) override {
    int to = (rank_ + 1) % size_, from = (rank_ - 1 + size_) % size_;
    size_t bytes = count * sizeof(float);
    // In place needs the outgoing data kept apart until the send is done.
    const float* out = send;
    if (send == recv) {
      staging_.assign(send, send + count);
      out = staging_.data();
    }
    auto sendBuf = context_->createUnboundBuffer(const_cast<float*>(out), bytes);
    auto recvBuf = context_->createUnboundBuffer(recv, bytes);
    recvBuf->recv(from, kSlot);
    sendBuf->send(to, kSlot);
    recvBuf->waitRecv();
    sendBuf->waitSend();
  }
  void barrier() override {
    gloo::BarrierOptions opts(context_);
    gloo::barrier(opts);
  }
  double sum(double value) override {
    gloo::AllreduceOptions opts(context_);
    opts.setInput(&value, 1);
    opts.setOutput(&value, 1);
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<double>));
    gloo::allreduce(opts);
    return value;
  }

 private:
  static constexpr uint64_t kSlot = 7;
  int rank_, size_;
  std::shared_ptr<gloo::Context> context_;
  std::vector<float> staging_;
};

}  // namespace

int main(int argc, char** argv) {
  slimeccl_perf::ProcessPlacement placement;
  try {
    placement = slimeccl_perf::discoverProcessPlacement([](const char* name) { return getenv(name); });
  } catch (const slimeccl_perf::UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
#ifdef BASELINE_OP_SENDRECV
  const auto op = slimeccl_perf::BaselineOp::SendRecv;
#else
  const auto op = slimeccl_perf::BaselineOp::AllGather;
#endif
  return slimeccl_perf::runBaseline([&] { return std::make_unique<GlooLibrary>(placement.rank, placement.count); },
                                    placement.rank, op, argc, argv);
}
