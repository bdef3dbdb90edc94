#include "net/ib/mem_monitor.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "src/base/log.h"

namespace slimeccl {
namespace {

constexpr uint64_t kEvents = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

int openUserfaultfd(std::string* why) {
  // User-mode-only needs no privilege where unprivileged userfaultfd is off; older kernels lack it.
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (fd < 0 && errno == EINVAL) fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) {
    *why = std::string("userfaultfd: ") + strerror(errno);
    return -1;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = kEvents | UFFD_FEATURE_PAGEFAULT_FLAG_WP;
  if (ioctl(fd, UFFDIO_API, &api) != 0 || (api.features & kEvents) != kEvents ||
      (api.ioctls & (1ULL << _UFFDIO_REGISTER)) == 0) {
    *why = std::string("userfaultfd cannot report unmaps here: ") + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

MemoryMonitor* MemoryMonitor::instance(std::string* why) {
  static std::mutex mutex;
  static MemoryMonitor* monitor = nullptr;
  static pid_t owner = 0;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  // A forked child has neither the thread nor the watches: it starts its own monitor.
  if (owner != getpid()) {
    owner = getpid();
    monitor = nullptr;
    failure.clear();
    int fd = openUserfaultfd(&failure);
    if (fd >= 0) monitor = new MemoryMonitor(fd);
    if (monitor == nullptr) SLIMECCL_INFO(kLogNet, -1, "ib: registrations are not cached: {}", failure);
  }
  if (why != nullptr) *why = failure;
  return monitor;
}

MemoryMonitor::MemoryMonitor(int fd) : fd_(fd) {
  thread_ = std::thread([this] { run(); });
  thread_.detach();
}

bool MemoryMonitor::watch(uintptr_t start, uintptr_t end) {
  uffdio_register reg{};
  reg.range.start = start;
  reg.range.len = end - start;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  return ioctl(fd_, UFFDIO_REGISTER, &reg) == 0;
}

void MemoryMonitor::unwatch(uintptr_t start, uintptr_t end) {
  uffdio_range range{start, end - start};
  ioctl(fd_, UFFDIO_UNREGISTER, &range);
}

void MemoryMonitor::publish(uintptr_t start, uintptr_t end) {
  uint64_t n = published_.load(std::memory_order_relaxed);
  Range& slot = log_[n % kLogSize];
  slot.start.store(start, std::memory_order_relaxed);
  slot.end.store(end, std::memory_order_relaxed);
  published_.store(n + 1, std::memory_order_release);
}

void MemoryMonitor::run() {
  pollfd pfd{fd_, POLLIN, 0};
  uffd_msg msgs[64];
  for (;;) {
    if (poll(&pfd, 1, -1) < 0) continue;
    reading_.store(true, std::memory_order_seq_cst);
    for (;;) {
      ssize_t n = read(fd_, msgs, sizeof(msgs));
      if (n <= 0) break;
      for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(uffd_msg); ++i) {
        const uffd_msg& m = msgs[i];
        if (m.event == UFFD_EVENT_UNMAP || m.event == UFFD_EVENT_REMOVE) {
          publish(m.arg.remove.start, m.arg.remove.end);
        } else if (m.event == UFFD_EVENT_REMAP) {
          publish(m.arg.remap.from, m.arg.remap.from + m.arg.remap.len);
        } else if (m.event == UFFD_EVENT_PAGEFAULT) {
          // Nothing here write-protects pages; should a fault come anyway, lift it at once.
          uintptr_t page = m.arg.pagefault.address & ~static_cast<uintptr_t>(sysconf(_SC_PAGESIZE) - 1);
          uffdio_writeprotect wp{};
          wp.range.start = page;
          wp.range.len = sysconf(_SC_PAGESIZE);
          ioctl(fd_, UFFDIO_WRITEPROTECT, &wp);
        }
      }
    }
    reading_.store(false, std::memory_order_seq_cst);
  }
}

void MemoryMonitor::collect(Cursor* cursor, const std::function<void(uintptr_t, uintptr_t)>& changed) {
  // An unmap that returned was read by the monitor after it raised reading_: wait until what it
  // read is published.
  while (reading_.load(std::memory_order_seq_cst)) sched_yield();
  uint64_t end = published_.load(std::memory_order_acquire);
  if (end - cursor->next > kLogSize) {
    changed(0, UINTPTR_MAX);
    cursor->next = end;
    return;
  }
  for (uint64_t i = cursor->next; i < end; ++i) {
    const Range& r = log_[i % kLogSize];
    changed(r.start.load(std::memory_order_relaxed), r.end.load(std::memory_order_relaxed));
  }
  // Entries overwritten while being read make what was read untrustworthy.
  if (published_.load(std::memory_order_acquire) - cursor->next > kLogSize) changed(0, UINTPTR_MAX);
  cursor->next = end;
}

}  // namespace slimeccl
