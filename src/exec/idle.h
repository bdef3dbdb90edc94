// How an executor with nothing to do waits: spin briefly, then yield, then block on what the
// pending requests can be woken by (the rank's doorbell or socket fds), in slices so that abort
// and deadlines are seen.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "net/net.h"
#include "src/base/util/cpu_relax.h"

namespace slimeccl {

// Fills the spin and yield counts left unset (-1) by SLIMECCL_SPIN/SLIMECCL_YIELD. Ranks that
// outnumber the cores they may run on (ranksOutnumberCores) yield at once: a rank spinning on a
// shared core holds it until the scheduler's tick while the peer it waits for cannot run. Others
// spin first. Both
// yield for milliseconds before sleeping, since a sleeping core takes tens of microseconds to wake
// and other load on the host can take a rank's core at any time.
void chooseIdlePolicy(bool sharesCores, int* spin, int* yield);

class IdleWaiter {
 public:
  IdleWaiter(int spinIterations, int yieldIterations) : spin_(spinIterations), yield_(yieldIterations) {}
  void progressed() { rounds_ = 0; }
  // Whether the next wait() blocks: only then does it need hints, which cost a pass to collect.
  bool nextWaitBlocks() const { return rounds_ >= spin_ + yield_; }
  // hints: what the in-flight requests wait on; stillIdle(): one more progress pass, true if
  // nothing moved (called after announcing sleep so that a wake-up cannot be lost). Spinning and
  // yielding stay inline: a small op passes here many times.
  template <typename StillIdle>
  void wait(const std::vector<WaitHint>& hints, const std::vector<Bell*>& bells, StillIdle&& stillIdle) {
    ++rounds_;
    if (rounds_ <= spin_) {
      if (phaseOver(rounds_, kSpinTicks)) rounds_ = spin_;  // the next round yields
      cpuRelax();
      return;
    }
    if (rounds_ <= spin_ + yield_) {
      if (phaseOver(rounds_ - spin_, kYieldTicks)) rounds_ = spin_ + yield_;  // the next round blocks
      sched_yield();
      return;
    }
    block(hints, bells, std::function<bool()>(std::forward<StillIdle>(stillIdle)));
  }

 private:
  // A poll of sockets is a system call per round, so the spin count alone could hold the core for
  // hundreds of microseconds, while a peer that shares it (a scheduler's choice, or ranks of
  // several hosts bound alike) cannot send what is awaited. The spin also ends after about 20 us,
  // counted on the CPU's time-stamp counter: in a VM whose clock source is trapped (HPET) a clock
  // read is an exit to the hypervisor, dearer than the polls it would bound.
#if defined(__x86_64__) || defined(__i386__)
  static uint64_t ticks() { return __builtin_ia32_rdtsc(); }
  static constexpr uint64_t kSpinTicks = 60000;  // 20 us at 3 GHz, 30 us at 2 GHz
#else
  static uint64_t ticks() { return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()); }
  static constexpr uint64_t kSpinTicks =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::microseconds(20)).count();
#endif
  static constexpr int kSpinClockEvery = 8;  // rounds between counter reads
  // The yields end after about 5 ms as well (a few thousand where a yield is a cheap system call).
  // Where it is dear (in a VM without hardware virtualisation 20000 took 30-50 ms) a rank that
  // yields after every completion of a bulk transfer would never sleep, and its yields take the
  // CPU from what moves the data (soft-RoCE does that work in the kernel, on these cores).
#if defined(__x86_64__) || defined(__i386__)
  static constexpr uint64_t kYieldTicks = 15000000;  // 5 ms at 3 GHz
#else
  static constexpr uint64_t kYieldTicks =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::milliseconds(5)).count();
#endif
  // Whether the phase (spin or yield) whose round this is has run past `limit` ticks: the counter
  // is read at the phase's first round and every kSpinClockEvery rounds after.
  bool phaseOver(int round, uint64_t limit) {
    if (round == 1) {
      phaseStart_ = ticks();
      return false;
    }
    return round % kSpinClockEvery == 0 && ticks() - phaseStart_ > limit;
  }
  void block(const std::vector<WaitHint>& hints, const std::vector<Bell*>& bells,
             const std::function<bool()>& stillIdle);

  int spin_;
  int yield_;
  int rounds_ = 0;
  uint64_t phaseStart_ = 0;
};

}  // namespace slimeccl
