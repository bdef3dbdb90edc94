// Per-iteration timing without a clock read per iteration: where the clocksource is slow (HPET
// in the soft-RoCE VM, where each clock_gettime traps to the kernel) that read would be most of
// a small message's time. Time-stamp-counter ticks are counted instead and turned into
// microseconds with the ratio measured over the whole run (as perftest does with cycles).
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <cstdint>

namespace rdma_test {

class TickTimer {
 public:
  TickTimer() : startTicks_(__rdtsc()), startSeconds_(seconds()) {}
  static uint64_t ticks() { return __rdtsc(); }
  // Microseconds per tick, over the time since construction.
  double usPerTick() const {
    double elapsed = seconds() - startSeconds_;
    return elapsed * 1e6 / static_cast<double>(__rdtsc() - startTicks_);
  }

 private:
  static double seconds() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }

  uint64_t startTicks_;
  double startSeconds_;
};

}  // namespace rdma_test
