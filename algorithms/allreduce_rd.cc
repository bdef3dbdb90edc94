// Recursive-doubling AllReduce (docs/algorithms.md), for small messages: over P = 2^k ranks, in
// step j every rank sends its whole partial result to rank XOR 2^j and reduces the partner's
// into it; after k steps every rank holds the full result. Other N fold into the largest power of
// two P below N first: of the first 2E ranks (E = N - P) each odd rank hands its whole input to
// the even rank below it, which reduces it, takes part in the P-rank algorithm and finally sends
// the result back.
//
// A step cannot reduce onto the vector it is sending (the partner may still be reading it), so
// each step reduces into a fresh copy in scratch and the last one into recv: scratch holds up to
// log2 N copies of the vector, which is small for the messages this algorithm is chosen for.
// In place, the input is first copied to scratch, since the last step writes recv while the
// first send may still be reading it.
#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

int add(Schedule& s, const Step& step) {
  s.steps.push_back(step);
  return static_cast<int>(s.steps.size()) - 1;
}

class RecursiveDoubling {
 public:
  explicit RecursiveDoubling(const ScheduleRequest& r) : r_(r), input_(r.inPlace ? BufferId::Recv : BufferId::Send) {
    while (active_ * 2 <= r.nranks) active_ *= 2;
    extra_ = r.nranks - active_;
  }

  Schedule build() {
    if (foldsAway()) {
      handOver();
      return s_;
    }
    BufferRange partial = whole(input_);
    int producer = -1;  // the step that wrote `partial`
    if (foldsIn()) {
      partial = freshCopy();
      producer = add(s_, Step{StepKind::RecvReduce, r_.rank + 1, whole(input_), partial});
    } else if (r_.inPlace) {
      partial = freshCopy();
      producer = add(s_, Step{StepKind::Copy, -1, whole(BufferId::Recv), partial});
    }
    const int a = activeIndex();
    for (int distance = 1; distance < active_; distance *= 2) {
      const int partner = rankOf(a ^ distance);
      add(s_, Step{StepKind::Send, partner, partial, {}, producer});
      const BufferRange into = distance * 2 == active_ ? whole(BufferId::Recv) : freshCopy();
      producer = add(s_, Step{StepKind::RecvReduce, partner, partial, into, producer});
      partial = into;
    }
    if (r_.op == slimecclAvg) producer = add(s_, Step{StepKind::Scale, -1, {}, whole(BufferId::Recv), producer});
    if (foldsIn()) add(s_, Step{StepKind::Send, r_.rank + 1, whole(BufferId::Recv), {}, producer});
    return s_;
  }

 private:
  bool foldsAway() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 1; }
  bool foldsIn() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 0; }
  int activeIndex() const { return foldsIn() ? r_.rank / 2 : r_.rank - extra_; }
  int rankOf(int active) const { return active < extra_ ? 2 * active : active + extra_; }

  BufferRange whole(BufferId buffer) const { return BufferRange{buffer, 0, r_.count * r_.typeBytes}; }
  BufferRange freshCopy() {
    BufferRange copy{BufferId::Scratch, s_.scratchBytes, r_.count * r_.typeBytes};
    s_.scratchBytes += copy.bytes;
    return copy;
  }

  // An odd rank of the folded pairs: its input goes to the even rank below, the result comes
  // back. In place the result overwrites what it sent.
  void handOver() {
    const int sent = add(s_, Step{StepKind::Send, r_.rank - 1, whole(input_), {}});
    add(s_, Step{StepKind::Recv, r_.rank - 1, {}, whole(BufferId::Recv), sent});
  }

  const ScheduleRequest& r_;
  const BufferId input_;
  int active_ = 1;  // P: the largest power of two not above N
  int extra_ = 0;   // E = N - P
  Schedule s_;
};

// One rank: the input is the result.
Schedule singleRank(const ScheduleRequest& r) {
  Schedule s;
  const BufferRange out{BufferId::Recv, 0, r.count * r.typeBytes};
  int result = -1;
  if (!r.inPlace) result = add(s, Step{StepKind::Copy, -1, BufferRange{BufferId::Send, 0, out.bytes}, out});
  if (r.op == slimecclAvg) add(s, Step{StepKind::Scale, -1, {}, out, result});
  return s;
}

}  // namespace

Schedule allreduceRecursiveDoubling(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRank(r);
  return RecursiveDoubling(r).build();
}

}  // namespace slimeccl
