#include "src/overlap/comm_gemm.h"

#include <climits>

#include "src/comm.h"
#include "src/base/error.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu.h"

namespace slimeccl {

slimecclResult_t commDeviceGemm(slimecclComm* comm, int device, const char* what, DeviceGemm** out) {
  if (comm->deviceGemm == nullptr) {
    // A first call inside a stream capture allocates outside the captured stream.
    CaptureModeRelaxed relaxed;
    SLIMECCL_CHECK(DeviceGemm::create(comm->rank, device, comm->params.gemmTf32, what, &comm->deviceGemm));
  }
  if (comm->deviceGemm->device() != device)
    return fail(slimecclInvalidUsage,
                "rank {}: {}: the stream is on GPU {}, but this communicator's GEMMs run on GPU {}", comm->rank, what,
                device, comm->deviceGemm->device());
  *out = comm->deviceGemm.get();
  return slimecclSuccess;
}

slimecclResult_t checkDeviceGemmSizes(const slimecclComm* comm, const char* what, size_t mLocal, size_t n, size_t k,
                                      slimecclDataType_t type) {
  const struct {
    const char* name;
    size_t value;
  } sizes[] = {{"mLocal", mLocal}, {"n", n}, {"k", k}};
  for (const auto& size : sizes)
    if (size.value > static_cast<size_t>(INT_MAX))
      return fail(slimecclInvalidArgument, "rank {}: {}: {} = {} is past cuBLAS's int dimensions", comm->rank, what,
                  size.name, size.value);
  const size_t rows = mLocal * static_cast<size_t>(comm->nranks), elem = typeSize(type);
  size_t bytes = 0;
  for (const size_t columns : {k, n})
    if (__builtin_mul_overflow(rows, columns, &bytes) || __builtin_mul_overflow(bytes, elem, &bytes))
      return fail(slimecclInvalidArgument,
                  "rank {}: {}: {} rows of {} columns is more bytes than the address space holds", comm->rank, what,
                  rows, columns);
  return slimecclSuccess;
}

}  // namespace slimeccl
