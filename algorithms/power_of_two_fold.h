// Folding N ranks onto the largest power of two P not above N (docs/algorithms.md): of the first
// 2E ranks (E = N - P) each odd rank hands its input to the even rank below it, which stands for
// both while the P active ranks run a power-of-two algorithm, then hands the result back.
#pragma once

#include "algorithms/schedule.h"

namespace slimeccl {

class PowerOfTwoFold {
 public:
  PowerOfTwoFold(int nranks, int rank);

  int active() const { return active_; }  // P
  // An odd rank of the folded pairs: it only hands its input over and receives the result.
  bool foldsAway() const { return rank_ < 2 * extra_ && rank_ % 2 == 1; }
  // An even rank of the folded pairs: it also reduces its odd neighbour's input.
  bool foldsIn() const { return rank_ < 2 * extra_ && rank_ % 2 == 0; }
  // This rank's index among the P active ranks (not meaningful when it folds away).
  int activeIndex() const { return foldsIn() ? rank_ / 2 : rank_ - extra_; }
  // The real rank of active rank a: the first of the ranks it stands for.
  int rankOf(int a) const { return a < extra_ ? 2 * a : a + extra_; }

 private:
  int rank_;
  int active_ = 1;
  int extra_ = 0;  // E
};

// The steps of a rank that folds away: send `input` to the even rank below, then receive its
// result into `result`. The receive waits for the send, since in place the two may overlap.
void addHandOver(Schedule& s, int rank, const BufferRange& input, const BufferRange& result);

}  // namespace slimeccl
