#include "src/overlap/device_gemm_reducescatter.h"

#include <algorithm>

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

// The most pieces a block is cut into: each costs a Reduce's handshakes and a smaller GEMM.
constexpr size_t kMaxPieces = 8;

// Fills rows of block d of the partial products with A's matching rows of block d x B, in runs of
// rows of at most pieceBytes of C.
class GemmProducer final : public BlockProducer {
 public:
  GemmProducer(DeviceGemm* gemm, const GemmReduceScatterCall& call, size_t pieceBytes)
      : gemm_(gemm), call_(call), pieceBytes_(std::max<size_t>(pieceBytes, 1)) {}

  size_t pieceCount(size_t) const override {
    const size_t blockBytes = call_.mLocal * call_.n * typeSize(call_.type);
    const size_t pieces = std::clamp<size_t>((blockBytes + pieceBytes_ - 1) / pieceBytes_, 1,
                                             std::max<size_t>(std::min(kMaxPieces, call_.mLocal), 1));
    return (call_.mLocal + pieces - 1) / pieces * call_.n;
  }

  slimecclResult_t produce(int block, size_t first, size_t count, void* out, void* cudaStream) override {
    const size_t firstRow = static_cast<size_t>(block) * call_.mLocal + first / call_.n, rows = count / call_.n;
    const char* aRows = static_cast<const char*>(call_.a) + firstRow * call_.k * typeSize(call_.type);
    const DeviceGemmShape shape{call_.type, call_.mLocal, call_.n, call_.k, call_.b, nullptr};
    return gemm_->multiplyRows(shape, rows, aRows, out, cudaStream, "GemmReduceScatter");
  }

 private:
  DeviceGemm* gemm_;
  const GemmReduceScatterCall& call_;
  size_t pieceBytes_;
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
  GemmProducer producer(gemm, call, comm->params.gemmRsPieceBytes);
  const ReduceScatterOverlapCall overlap{comm,       partials,    call.c,  recvcount, call.type,
                                         call.redOp, call.premul, nullptr, nullptr,   call.stream};
  return submitDeviceReduceScatterOverlap(overlap, producer);
}

}  // namespace slimeccl
