#include "common/host_buffer.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "slimeccl.h"

namespace slimeccl_perf {

HostBuffer::HostBuffer(size_t bytes, bool shared) : data_(nullptr, Free{shared}), size_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = bytes == 0 ? page : (bytes + page - 1) / page * page;
  void* memory = nullptr;
  if (shared) {
    if (slimecclMemAlloc(&memory, rounded) != slimecclSuccess)
      throw std::runtime_error(std::string("slimecclMemAlloc: ") + slimecclGetLastError(nullptr));
  } else {
    memory = std::aligned_alloc(page, rounded);
    if (memory == nullptr) throw std::bad_alloc();
  }
  std::memset(memory, 0, rounded);
  data_.reset(static_cast<char*>(memory));
}

void HostBuffer::Free::operator()(char* memory) const {
  if (shared) {
    slimecclMemFree(memory);
  } else {
    std::free(memory);
  }
}

}  // namespace slimeccl_perf
