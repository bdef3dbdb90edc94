// Tells registration caches when memory they registered is unmapped, moved or discarded, so that
// a buffer freed and reallocated at the same address gets a fresh registration instead of one
// that still points at the old pages.
//
// It watches ranges with userfaultfd for its events only: ranges are registered in write-protect
// mode and never write-protected, so no page fault waits on it. The kernel holds a thread that
// unmaps a watched range until the event is read, so a thread of the monitor reads them at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace slimeccl {

class MemoryMonitor {
 public:
  // The process's monitor, started on first use; nullptr (and *why) where userfaultfd cannot
  // report unmaps (no kernel support, or not permitted).
  static MemoryMonitor* instance(std::string* why = nullptr);

  // Starts watching [start, end) (page aligned); false when the mapping cannot be watched
  // (e.g. a file mapping, or memory another userfaultfd watches).
  bool watch(uintptr_t start, uintptr_t end);
  void unwatch(uintptr_t start, uintptr_t end);

  // A reader's position in the stream of changed ranges.
  struct Cursor {
    uint64_t next = 0;
  };
  // Calls changed(start, end) for every range changed since the cursor, or changed(0, UINTPTR_MAX)
  // when the reader fell too far behind to know. Every unmap that returned before this call is
  // seen by it.
  void collect(Cursor* cursor, const std::function<void(uintptr_t, uintptr_t)>& changed);

 private:
  struct Range {
    std::atomic<uintptr_t> start;
    std::atomic<uintptr_t> end;
  };
  static constexpr size_t kLogSize = 4096;

  explicit MemoryMonitor(int fd);
  void run();
  void publish(uintptr_t start, uintptr_t end);

  int fd_;
  std::atomic<bool> reading_{false};  // set before each read of events, cleared once they are published
  std::atomic<uint64_t> published_{0};
  Range log_[kLogSize];
  std::thread thread_;
};

}  // namespace slimeccl
