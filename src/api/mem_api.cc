// Shared host memory for buffers that peers on the host copy from directly.
#include "src/api/boundary.h"
#include "src/base/sys/shared_alloc.h"

using namespace slimeccl;

SLIMECCL_API slimecclResult_t slimecclMemAlloc(void** ptr, size_t size) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (ptr == nullptr) return fail(slimecclInvalidArgument, "slimecclMemAlloc: ptr is NULL");
    *ptr = nullptr;
    if (size == 0) return slimecclSuccess;
    std::string why;
    void* memory = sharedAlloc(size, &why);
    if (memory == nullptr)
      return fail(slimecclSystemError, "slimecclMemAlloc: cannot allocate {} bytes of shared memory: {}", size, why);
    *ptr = memory;
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclMemFree(void* ptr) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (ptr == nullptr) return slimecclSuccess;
    if (!sharedFree(ptr))
      return fail(slimecclInvalidArgument, "slimecclMemFree: {} is not a live buffer of slimecclMemAlloc", ptr);
    return slimecclSuccess;
  });
}
