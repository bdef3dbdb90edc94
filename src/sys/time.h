// Monotonic time and deadlines shared by every bounded wait.
#pragma once

#include <chrono>
#include <cstdint>

namespace slimeccl {

using Clock = std::chrono::steady_clock;

inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// A point in time after which a wait gives up; timeoutMs <= 0 means "never".
class Deadline {
 public:
  static Deadline never() { return Deadline(); }
  static Deadline afterMs(int64_t timeoutMs) {
    Deadline d;
    if (timeoutMs > 0) d.atNs_ = nowNs() + timeoutMs * 1000000;
    return d;
  }
  bool expired() const { return atNs_ != 0 && nowNs() >= atNs_; }
  bool isNever() const { return atNs_ == 0; }
  // Milliseconds left, capped at capMs (for poll/futex slices); never negative.
  int remainingMsCapped(int capMs) const {
    if (atNs_ == 0) return capMs;
    int64_t left = (atNs_ - nowNs()) / 1000000;
    if (left < 0) return 0;
    return left < capMs ? static_cast<int>(left) : capMs;
  }

 private:
  int64_t atNs_ = 0;
};

}  // namespace slimeccl
