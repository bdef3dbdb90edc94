#include "src/device/stream_memops.h"

#include <algorithm>

#include "src/device/driver_entry.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

namespace slimeccl {

void MemOpBatch::write(uint64_t address, uint32_t value) { ops_.push_back(Op{Kind::Write, address, value}); }
void MemOpBatch::waitEquals(uint64_t address, uint32_t value) { ops_.push_back(Op{Kind::WaitEquals, address, value}); }
void MemOpBatch::waitAtLeast(uint64_t address, uint32_t value) {
  ops_.push_back(Op{Kind::WaitAtLeast, address, value});
}

#ifdef SLIMECCL_HAVE_CUDA

namespace {

PFN_cuStreamBatchMemOp_v11070 batchMemOp() {
  static const auto fn = driverFunction<PFN_cuStreamBatchMemOp_v11070>("cuStreamBatchMemOp", 11070);
  return fn;
}

// The most operations one cuStreamBatchMemOp call takes.
constexpr size_t kMaxBatch = 255;

}  // namespace

bool streamMemOpsAvailable() { return batchMemOp() != nullptr; }

slimecclResult_t MemOpBatch::enqueue(void* stream) {
  if (ops_.empty()) return slimecclSuccess;
  std::vector<CUstreamBatchMemOpParams> params(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i) {
    CUstreamBatchMemOpParams& p = params[i];
    p = CUstreamBatchMemOpParams{};
    if (ops_[i].kind != Kind::Write) {
      p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
      p.waitValue.address = ops_[i].address;
      p.waitValue.value = ops_[i].value;
      // GEQ compares as (int32_t)(*address - value) >= 0, so a count that wraps still passes.
      p.waitValue.flags = ops_[i].kind == Kind::WaitEquals ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ;
    } else {
      p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
      p.writeValue.address = ops_[i].address;
      p.writeValue.value = ops_[i].value;
      // Default: the write lands after everything the stream did before it is visible.
      p.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    }
  }
  const size_t count = ops_.size();
  ops_.clear();
  // Longer batches go in parts, one after the other on the stream, which keeps their order.
  CUresult rc = CUDA_SUCCESS;
  for (size_t first = 0; first < count && rc == CUDA_SUCCESS; first += kMaxBatch)
    rc = batchMemOp()(static_cast<CUstream>(stream), static_cast<unsigned>(std::min(kMaxBatch, count - first)),
                      params.data() + first, 0);
  if (rc != CUDA_SUCCESS)
    return fail(slimecclUnhandledDeviceError,
                "queuing {} flag writes and waits on the CUDA stream failed (CUresult {})", count,
                static_cast<int>(rc));
  return slimecclSuccess;
}

#else

bool streamMemOpsAvailable() { return false; }

slimecclResult_t MemOpBatch::enqueue(void*) {
  ops_.clear();
  return fail(slimecclInvalidUsage, "this build of slimeccl has no CUDA support");
}

#endif

}  // namespace slimeccl
