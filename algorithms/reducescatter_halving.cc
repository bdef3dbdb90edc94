// Recursive-halving ReduceScatter (docs/algorithms.md). With N a power of two, in each of the
// log2 N steps a rank splits the blocks it is still responsible for in two halves, sends the half
// holding its partner's block to its partner (rank XOR distance, distance N/2, N/4, ..., 1) and
// reduces the half it keeps with the one the partner sends; at the end it keeps only its own block.
//
// Other N fold into the largest power of two P below N first: of the first 2E ranks (E = N - P)
// each odd rank hands its whole input to the even rank below it, which reduces it and stands for
// both ranks (and both blocks) while the P remaining ranks halve; the odd rank then receives its
// block back.
//
// Partial results live in scratch at the blocks' input offsets. In place, recv is block r of the
// send buffer: it is written only by the last step, after every read of that block.
#include <algorithm>

#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

int add(Schedule& s, const Step& step) {
  s.steps.push_back(step);
  return static_cast<int>(s.steps.size()) - 1;
}

class RecursiveHalving {
 public:
  explicit RecursiveHalving(const ScheduleRequest& r) : r_(r), blockBytes_(r.count * r.typeBytes) {
    while (active_ * 2 <= r.nranks) active_ *= 2;
    extra_ = r.nranks - active_;
  }

  Schedule build() {
    if (foldsAway()) {
      handOver();
    } else {
      halve();
    }
    return s_;
  }

 private:
  bool foldsAway() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 1; }
  bool foldsIn() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 0; }
  // Active rank a stands for ranks (and blocks) firstOf(a) .. firstOf(a + 1) - 1.
  int firstOf(int a) const { return a < extra_ ? 2 * a : a + extra_; }
  int activeIndex() const { return foldsIn() ? r_.rank / 2 : r_.rank - extra_; }

  BufferRange blocks(BufferId buffer, int first, int count) const {
    return BufferRange{buffer, static_cast<size_t>(first) * blockBytes_, static_cast<size_t>(count) * blockBytes_};
  }
  // The blocks of active ranks lo .. hi - 1.
  BufferRange activeBlocks(BufferId buffer, int lo, int hi) {
    BufferRange range = blocks(buffer, firstOf(lo), firstOf(hi) - firstOf(lo));
    if (buffer == BufferId::Scratch) s_.scratchBytes = std::max(s_.scratchBytes, range.offset + range.bytes);
    return range;
  }
  BufferRange out() const { return BufferRange{BufferId::Recv, 0, blockBytes_}; }

  // An odd rank of the folded pairs: its input goes to the even rank below, its block comes back
  // reduced (and averaged). In place the block it receives overwrites part of what it sent.
  void handOver() {
    const int partner = r_.rank - 1;
    const int sent = add(s_, Step{StepKind::Send, partner, blocks(BufferId::Send, 0, r_.nranks), {}});
    add(s_, Step{StepKind::Recv, partner, {}, out(), sent});
  }

  void halve() {
    const int a = activeIndex();
    BufferId input = BufferId::Send;
    int partial = -1;  // the step that produced the partial results read next
    if (foldsIn()) {
      const BufferRange all = blocks(BufferId::Scratch, 0, r_.nranks);
      s_.scratchBytes = all.bytes;
      partial = add(s_, Step{StepKind::RecvReduce, r_.rank + 1, blocks(BufferId::Send, 0, r_.nranks), all});
      input = BufferId::Scratch;
    }
    int lo = 0;  // the active ranks whose blocks this rank still reduces: lo .. lo + 2 * distance - 1
    for (int distance = active_ / 2; distance >= 1; distance /= 2) {
      const int partner = firstOf(a ^ distance);
      const int keep = (a & distance) ? lo + distance : lo;
      const int give = (a & distance) ? lo : lo + distance;
      add(s_, Step{StepKind::Send, partner, activeBlocks(input, give, give + distance), {}, partial});
      const bool ownBlockOnly = distance == 1 && !foldsIn();
      const BufferRange into = ownBlockOnly ? out() : activeBlocks(BufferId::Scratch, keep, keep + distance);
      partial = add(s_, Step{StepKind::RecvReduce, partner, activeBlocks(input, keep, keep + distance), into, partial});
      input = BufferId::Scratch;
      lo = keep;
    }
    if (foldsIn()) {
      returnFoldedBlock(partial);
    } else if (r_.op == slimecclAvg) {
      add(s_, Step{StepKind::Scale, -1, {}, out(), partial});
    }
  }

  // This rank now holds its own block and its odd neighbour's, both complete.
  void returnFoldedBlock(int reduced) {
    const BufferRange pair = blocks(BufferId::Scratch, r_.rank, 2);
    if (r_.op == slimecclAvg) reduced = add(s_, Step{StepKind::Scale, -1, {}, pair, reduced});
    add(s_, Step{StepKind::Send, r_.rank + 1, blocks(BufferId::Scratch, r_.rank + 1, 1), {}, reduced});
    add(s_, Step{StepKind::Copy, -1, blocks(BufferId::Scratch, r_.rank, 1), out(), reduced});
  }

  const ScheduleRequest& r_;
  const size_t blockBytes_;
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

Schedule reduceScatterHalving(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRank(r);
  return RecursiveHalving(r).build();
}

}  // namespace slimeccl
