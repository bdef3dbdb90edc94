// Monotonic time and deadlines shared by every bounded wait.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace slimeccl {

using Clock = std::chrono::steady_clock;

inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The same clock at scheduler-tick resolution (a few ms), for checks made on every idle pass
// (deadlines, peer liveness): it reads a word the kernel publishes instead of the time source,
// which in a VM can cost more than the progress pass itself.
inline int64_t coarseNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A point in time after which a wait gives up; timeoutMs <= 0 means "never". On the coarse
// clock throughout: every op sets one, and its few milliseconds of resolution are far below any
// timeout.
class Deadline {
 public:
  static Deadline never() { return Deadline(); }
  static Deadline afterMs(int64_t timeoutMs) {
    Deadline d;
    if (timeoutMs <= 0) return d;
    // A timeout too long to count in nanoseconds ("for ever", written as a huge number) is none.
    int64_t now = coarseNowNs();
    if (timeoutMs < (INT64_MAX - now) / 1000000) d.atNs_ = now + timeoutMs * 1000000;
    return d;
  }
  bool expired() const { return atNs_ != 0 && coarseNowNs() >= atNs_; }
  bool isNever() const { return atNs_ == 0; }
  // Milliseconds left, capped at capMs (for poll/futex slices); never negative.
  int remainingMsCapped(int capMs) const {
    if (atNs_ == 0) return capMs;
    int64_t left = (atNs_ - coarseNowNs()) / 1000000;
    if (left < 0) return 0;
    return left < capMs ? static_cast<int>(left) : capMs;
  }

 private:
  int64_t atNs_ = 0;
};

}  // namespace slimeccl
