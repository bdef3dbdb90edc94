#include "src/overlap/device_allgather_gemm.h"

#include <memory>

#include "src/comm.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/exec/block_consumer.h"
#include "src/overlap/allgather_overlap.h"
#include "src/overlap/comm_gemm.h"
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

}  // namespace

slimecclResult_t submitDeviceAllGatherGemm(const GemmCall& call) {
  slimecclComm* comm = call.comm;
  SLIMECCL_CHECK(checkDeviceGemmSizes(comm, "AllGatherGemm", call.mLocal, call.n, call.k, call.type));
  SLIMECCL_CHECK(checkSeparateOutputs(call));
  DeviceGemm* gemm = nullptr;
  SLIMECCL_CHECK(commDeviceGemm(comm, call.stream->cuda->device(), "AllGatherGemm", &gemm));
  const size_t sendcount = call.mLocal * call.k;
  void* gathered = call.aGathered;
  if (gathered == nullptr) {
    CaptureModeRelaxed relaxed;
    SLIMECCL_CHECK(gemm->workspace(DeviceGemm::Workspace::kGatheredA,
                                   sendcount * typeSize(call.type) * static_cast<size_t>(comm->nranks), &gathered));
  }
  auto consumer = std::make_shared<GemmConsumer>(
      comm, gemm, DeviceGemmShape{call.type, call.mLocal, call.n, call.k, call.b, call.c}, call.aGathered != nullptr);
  OverlapCall overlap{comm, call.aLocal, gathered, sendcount, call.type, nullptr, nullptr, call.stream};
  return submitDeviceAllGatherOverlap(overlap, consumer);
}

}  // namespace slimeccl
