#include "src/exec/idle.h"

#include <poll.h>
#include <sched.h>

namespace slimeccl {
namespace {
constexpr int kSliceMs = 50;      // longest sleep before re-checking abort and deadline
constexpr int kMixedSliceMs = 1;  // sockets and doorbells at once: poll the sockets briefly
constexpr int kSpinPolls = 200;
// A few milliseconds of yielding (IdleWaiter also ends it after about 5 ms): with nobody else
// runnable a yield returns at once, and a rank that sleeps early pays the wake-up on its next message.
constexpr int kYields = 20000;
}  // namespace

void chooseIdlePolicy(bool sharesCores, int* spin, int* yield) {
  if (*spin < 0) *spin = sharesCores ? 0 : kSpinPolls;
  // Yielding to runnable peers is what lets them progress; only a long wait ends in a sleep.
  if (*yield < 0) *yield = kYields;
}

void IdleWaiter::block(const std::vector<WaitHint>& hints, const std::vector<Bell*>& bells,
                       const std::function<bool()>& stillIdle) {
  std::vector<pollfd> fds;
  bool wantsBell = false;
  for (const WaitHint& h : hints) {
    if (h.fd >= 0) fds.push_back({h.fd, h.events, 0});
    wantsBell |= h.bell;
  }
  if (fds.empty() && wantsBell && bells.size() == 1) {
    bells[0]->sleepUnless(stillIdle, kSliceMs);
    return;
  }
  if (!stillIdle()) return;
  int sliceMs = fds.empty() ? kMixedSliceMs : (wantsBell ? kMixedSliceMs : kSliceMs);
  poll(fds.data(), fds.size(), sliceMs);
}

}  // namespace slimeccl
