#include "src/base/sys/touch_pages.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace slimeccl {

void touchPages(void* base, size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* bytesAt = static_cast<char*>(base);
  for (size_t offset = 0; offset < bytes; offset += page)
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(bytesAt + offset)).fetch_add(0, std::memory_order_relaxed);
}

}  // namespace slimeccl
