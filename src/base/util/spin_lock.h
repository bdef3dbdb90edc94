// A lock for short sections that seldom meet, such as an op's flight-recorder entry and a dump
// of the recorder: taking it is one atomic exchange and releasing it one store, where a mutex
// costs a call and an atomic operation each way, twice per op. A waiter yields its core after a
// few tries, so a holder that takes longer (a dump formats its table) costs it no spinning.
#pragma once

#include <sched.h>

#include <atomic>

#include "src/base/util/cpu_relax.h"

namespace slimeccl {

class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) waitUntilFree();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  void waitUntilFree() const {
    for (int tries = 0; held_.load(std::memory_order_relaxed); ++tries) {
      if (tries < kSpins)
        cpuRelax();
      else
        sched_yield();
    }
  }
  static constexpr int kSpins = 64;
  std::atomic<bool> held_{false};
};

}  // namespace slimeccl
