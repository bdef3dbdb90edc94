// Buffer registration (NCCL's slimecclCommRegister / slimecclCommDeregister names and signatures).
#include "src/api/boundary.h"
#include "src/comm.h"
#include "src/device/gpu.h"

using namespace slimeccl;

SLIMECCL_API slimecclResult_t slimecclCommRegister(const slimecclComm_t comm, void* buff, size_t size, void** handle) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    if (handle == nullptr) return fail(slimecclInvalidArgument, "rank {}: CommRegister: handle is NULL", comm->rank);
    *handle = nullptr;
    if (buff == nullptr) return fail(slimecclInvalidArgument, "rank {}: CommRegister: buff is NULL", comm->rank);
    if (size == 0) return fail(slimecclInvalidArgument, "rank {}: CommRegister: size is 0", comm->rank);
    const uintptr_t start = reinterpret_cast<uintptr_t>(buff);
    if (size - 1 > UINTPTR_MAX - start)
      return fail(slimecclInvalidArgument, "rank {}: CommRegister: {} bytes from {} run past the address space",
                  comm->rank, size, buff);
    // Device memory is registered a whole allocation or a part of one, as peers map allocations.
    const char* base = nullptr;
    size_t bytes = 0;
    if (deviceAllocation(buff, &base, &bytes) && static_cast<char*>(buff) + size > base + bytes)
      return fail(slimecclInvalidArgument,
                  "rank {}: CommRegister: {} bytes from {} run past the end of their device allocation ({} bytes "
                  "from {})",
                  comm->rank, size, buff, bytes, static_cast<const void*>(base));
    *handle = comm->registrations.add(buff, size);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommDeregister(const slimecclComm_t comm, void* handle) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    if (handle == nullptr || !comm->registrations.remove(handle))
      return fail(slimecclInvalidArgument,
                  "rank {}: CommDeregister: {} is not a live handle of slimecclCommRegister on this communicator",
                  comm->rank, handle);
    return slimecclSuccess;
  });
}
