#include "src/overlap/device_allgather_gemm.h"

#include <climits>
#include <memory>

#include "src/comm.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/exec/block_consumer.h"
#include "src/overlap/allgather_overlap.h"
#include "src/overlap/operand_check.h"
#include "src/stream.h"

namespace slimeccl {
namespace {

class GemmConsumer : public BlockConsumer {
 public:
  // keepsGathered: the caller asked for the gathered A; otherwise it lands in the library's
  // workspace, where the own block (read from aLocal) need not be copied.
  GemmConsumer(slimecclComm* comm, DeviceGemm* gemm, const DeviceGemmShape& shape, bool keepsGathered)
      : BlockConsumer(comm->rank, comm->nranks), keepsGathered_(keepsGathered), gemm_(gemm), shape_(shape) {}

  bool needsOwnBlockInRecv() const override { return keepsGathered_; }

 protected:
  slimecclResult_t consume(int srcRank, const void* block, void* cudaStream) override {
    return gemm_->multiplyRowBlock(shape_, srcRank, block, cudaStream, "AllGatherGemm");
  }

 private:
  bool keepsGathered_;
  DeviceGemm* gemm_;
  DeviceGemmShape shape_;
};

// cuBLAS takes int dimensions and leading dimensions, and the byte counts of A, B and C (nranks
// blocks of each) must fit a size_t.
slimecclResult_t checkCublasSizes(const GemmCall& call) {
  const struct {
    const char* name;
    size_t value;
  } sizes[] = {{"mLocal", call.mLocal}, {"n", call.n}, {"k", call.k}};
  for (const auto& size : sizes)
    if (size.value > static_cast<size_t>(INT_MAX))
      return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: {} = {} is past cuBLAS's int dimensions",
                  call.comm->rank, size.name, size.value);
  const size_t rows = call.mLocal * static_cast<size_t>(call.comm->nranks), elem = typeSize(call.type);
  size_t bytes = 0;
  for (const size_t columns : {call.k, call.n})
    if (__builtin_mul_overflow(rows, columns, &bytes) || __builtin_mul_overflow(bytes, elem, &bytes))
      return fail(slimecclInvalidArgument,
                  "rank {}: AllGatherGemm: {} rows of {} columns is more bytes than the address space holds",
                  call.comm->rank, rows, columns);
  return slimecclSuccess;
}

// The comm's cuBLAS, made on the GPU of its first call; calls on another GPU are refused.
slimecclResult_t deviceGemmOf(slimecclComm* comm, int device, DeviceGemm** out) {
  if (comm->deviceGemm == nullptr) {
    // A first call inside a stream capture allocates outside the captured stream.
    CaptureModeRelaxed relaxed;
    SLIMECCL_CHECK(DeviceGemm::create(comm->rank, device, comm->params.gemmTf32, &comm->deviceGemm));
  }
  if (comm->deviceGemm->device() != device)
    return fail(slimecclInvalidUsage,
                "rank {}: AllGatherGemm: the stream is on GPU {}, but this communicator's AllGatherGemms run on GPU {}",
                comm->rank, device, comm->deviceGemm->device());
  *out = comm->deviceGemm.get();
  return slimecclSuccess;
}

}  // namespace

slimecclResult_t submitDeviceAllGatherGemm(const GemmCall& call) {
  slimecclComm* comm = call.comm;
  SLIMECCL_CHECK(checkCublasSizes(call));
  SLIMECCL_CHECK(checkSeparateOutputs(call));
  DeviceGemm* gemm = nullptr;
  SLIMECCL_CHECK(deviceGemmOf(comm, call.stream->cuda->device(), &gemm));
  const size_t sendcount = call.mLocal * call.k;
  void* gathered = call.aGathered;
  if (gathered == nullptr) {
    CaptureModeRelaxed relaxed;
    SLIMECCL_CHECK(
        gemm->gatheredWorkspace(sendcount * typeSize(call.type) * static_cast<size_t>(comm->nranks), &gathered));
  }
  auto consumer = std::make_shared<GemmConsumer>(
      comm, gemm, DeviceGemmShape{call.type, call.mLocal, call.n, call.k, call.b, call.c}, call.aGathered != nullptr);
  OverlapCall overlap{comm, call.aLocal, gathered, sendcount, call.type, nullptr, nullptr, call.stream};
  return submitDeviceAllGatherOverlap(overlap, consumer);
}

}  // namespace slimeccl
