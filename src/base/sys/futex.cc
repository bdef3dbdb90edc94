#include "src/base/sys/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace slimeccl {

void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs) {
  struct timespec ts;
  ts.tv_sec = timeoutMs / 1000;
  ts.tv_nsec = static_cast<long>(timeoutMs % 1000) * 1000000L;
  // Shared (not FUTEX_PRIVATE) so that a peer process mapping the same page can wake us.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace slimeccl
