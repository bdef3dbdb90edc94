#include "src/overlap/device_gemm_reducescatter.h"

#include "src/comm.h"
#include "src/base/error.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu.h"
#include "src/op.h"
#include "src/overlap/comm_gemm.h"
#include "src/overlap/device_reducescatter_overlap.h"
#include "src/overlap/operand_check.h"
#include "src/stream.h"

namespace slimeccl {
namespace {

class GemmProducer final : public BlockProducer {
 public:
  GemmProducer(DeviceGemm* gemm, const GemmReduceScatterCall& call) : gemm_(gemm), call_(call) {}

  slimecclResult_t produce(int block, void* out, void* cudaStream) override {
    const char* aRows =
        static_cast<const char*>(call_.a) + static_cast<size_t>(block) * call_.mLocal * call_.k * typeSize(call_.type);
    const DeviceGemmShape shape{call_.type, call_.mLocal, call_.n, call_.k, call_.b, nullptr};
    return gemm_->multiplyRows(shape, call_.mLocal, aRows, out, cudaStream, "GemmReduceScatter");
  }

 private:
  DeviceGemm* gemm_;
  const GemmReduceScatterCall& call_;
};

}  // namespace

slimecclResult_t submitDeviceGemmReduceScatter(const GemmReduceScatterCall& call) {
  slimecclComm* comm = call.comm;
  SLIMECCL_CHECK(checkDeviceGemmSizes(comm, "GemmReduceScatter", call.mLocal, call.n, call.k, call.type));
  SLIMECCL_CHECK(checkGemmReduceScatterOperands(call));
  DeviceGemm* gemm = nullptr;
  SLIMECCL_CHECK(commDeviceGemm(comm, call.stream->cuda->device(), "GemmReduceScatter", &gemm));
  const size_t recvcount = call.mLocal * call.n;
  void* partials = nullptr;
  {
    CaptureModeRelaxed relaxed;
    SLIMECCL_CHECK(gemm->workspace(DeviceGemm::Workspace::kPartialProducts,
                                   recvcount * typeSize(call.type) * static_cast<size_t>(comm->nranks), &partials));
  }
  GemmProducer producer(gemm, call);
  const ReduceScatterOverlapCall overlap{comm,       partials,    call.c,  recvcount, call.type,
                                         call.redOp, call.premul, nullptr, nullptr,   call.stream};
  return submitDeviceReduceScatterOverlap(overlap, producer);
}

}  // namespace slimeccl
