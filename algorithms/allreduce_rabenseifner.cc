// Rabenseifner AllReduce (docs/algorithms.md): a recursive-halving ReduceScatter followed by a
// recursive-doubling AllGather, over P = 2^k ranks and P parts of the vector.
//   Halving, distance P/2, P/4, ..., 1: split the parts this rank still reduces in two halves, send
//     the half holding the partner's part to the partner (rank XOR distance) and reduce the other
//     half with what the partner sends. At the end the rank holds its own part complete.
//   Doubling, distance 1, 2, ..., P/2: send the parts held so far to the partner and receive the
//     partner's, which are the ones this rank gave away at the same distance while halving.
// Other N fold into the largest power of two P below N first: of the first 2E ranks (E = N - P)
// each odd rank hands its whole input to the even rank below it, which reduces it, takes part in
// the P-rank algorithm and finally sends the whole result back.
//
// Partial results live in scratch at their vector offsets; the last halving step reduces the own
// part into recv, where the doubling gathers the others. With avg each rank divides its complete
// part before the doubling hands it out.
#include <algorithm>

#include "algorithms/catalog.h"
#include "algorithms/partition.h"

namespace slimeccl {
namespace {

int add(Schedule& s, const Step& step) {
  s.steps.push_back(step);
  return static_cast<int>(s.steps.size()) - 1;
}

// Adds a communication step unless it would carry no bytes; returns its index or -1.
int addTransfer(Schedule& s, const Step& step) {
  const BufferRange& data = step.kind == StepKind::Send ? step.src : step.dst;
  return data.bytes == 0 ? -1 : add(s, step);
}

class Rabenseifner {
 public:
  explicit Rabenseifner(const ScheduleRequest& r) : r_(r), input_(r.inPlace ? BufferId::Recv : BufferId::Send) {
    while (active_ * 2 <= r.nranks) active_ *= 2;
    extra_ = r.nranks - active_;
  }

  Schedule build() {
    if (foldsAway()) {
      handOver();
    } else {
      int complete = reduceScatterByHalving();
      if (r_.op == slimecclAvg && parts(BufferId::Recv, activeIndex(), 1).bytes != 0)
        complete = add(s_, Step{StepKind::Scale, -1, {}, parts(BufferId::Recv, activeIndex(), 1), complete});
      const int gathered = allGatherByDoubling(complete);
      if (foldsIn()) add(s_, Step{StepKind::Send, r_.rank + 1, whole(BufferId::Recv), {}, gathered});
    }
    return s_;
  }

 private:
  bool foldsAway() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 1; }
  bool foldsIn() const { return r_.rank < 2 * extra_ && r_.rank % 2 == 0; }
  int activeIndex() const { return foldsIn() ? r_.rank / 2 : r_.rank - extra_; }
  int rankOf(int active) const { return active < extra_ ? 2 * active : active + extra_; }

  BufferRange whole(BufferId buffer) const { return BufferRange{buffer, 0, r_.count * r_.typeBytes}; }
  // Parts first .. first + n - 1 of the P parts.
  BufferRange parts(BufferId buffer, int first, int n) {
    ByteBlock block = partsOf(r_.count, r_.typeBytes, active_, first, n);
    if (buffer == BufferId::Scratch) s_.scratchBytes = std::max(s_.scratchBytes, block.offset + block.bytes);
    return BufferRange{buffer, block.offset, block.bytes};
  }

  // An odd rank of the folded pairs: its input goes to the even rank below, the result comes
  // back. In place the result overwrites what it sent.
  void handOver() {
    const int sent = add(s_, Step{StepKind::Send, r_.rank - 1, whole(input_), {}});
    add(s_, Step{StepKind::Recv, r_.rank - 1, {}, whole(BufferId::Recv), sent});
  }

  // Returns the step that completes the own part in recv.
  int reduceScatterByHalving() {
    const int a = activeIndex();
    halvingInput_ = input_;
    int partial = -1;  // the step that produced the partial results read next
    if (foldsIn()) {
      partial = add(s_, Step{StepKind::RecvReduce, r_.rank + 1, whole(input_), whole(BufferId::Scratch)});
      s_.scratchBytes = whole(BufferId::Scratch).bytes;
      halvingInput_ = BufferId::Scratch;
    }
    BufferId from = halvingInput_;
    int lo = 0;  // this rank still reduces parts lo .. lo + 2 * distance - 1
    for (int distance = active_ / 2; distance >= 1; distance /= 2) {
      const int partner = rankOf(a ^ distance);
      const int keep = (a & distance) ? lo + distance : lo;
      const int give = (a & distance) ? lo : lo + distance;
      const int sent = addTransfer(s_, Step{StepKind::Send, partner, parts(from, give, distance), {}, partial});
      if (distance == active_ / 2) firstSend_ = sent;
      const BufferRange into = distance == 1 ? parts(BufferId::Recv, a, 1) : parts(BufferId::Scratch, keep, distance);
      const int reduced =
          addTransfer(s_, Step{StepKind::RecvReduce, partner, parts(from, keep, distance), into, partial});
      if (reduced >= 0) partial = reduced;
      from = BufferId::Scratch;
      lo = keep;
    }
    return partial;
  }

  // Each receive waits for the previous one (the first for the own part), so the last receive
  // stands for all the parts gathered so far: the next send reads them all. Returns that step.
  int allGatherByDoubling(int ownPart) {
    const int a = activeIndex();
    int gathered = ownPart;
    for (int distance = 1; distance < active_; distance *= 2) {
      const int partner = rankOf(a ^ distance);
      const int held = a & ~(distance - 1);
      addTransfer(s_, Step{StepKind::Send, partner, parts(BufferId::Recv, held, distance), {}, gathered});
      // The last receive lands on the half the first halving send gave away; when that send read
      // recv (in place), the receive must wait until it has left. No later send reads that half.
      const bool last = distance * 2 == active_;
      const int after = last && halvingInput_ == BufferId::Recv ? firstSend_ : gathered;
      const int received =
          addTransfer(s_, Step{StepKind::Recv, partner, {}, parts(BufferId::Recv, held ^ distance, distance), after});
      if (received >= 0) gathered = received;
    }
    return gathered;
  }

  const ScheduleRequest& r_;
  const BufferId input_;
  BufferId halvingInput_ = BufferId::Send;  // where the first halving step reads the input
  int firstSend_ = -1;                      // the first halving send
  int active_ = 1;                          // P: the largest power of two not above N
  int extra_ = 0;                           // E = N - P
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

Schedule allreduceRabenseifner(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRank(r);
  return Rabenseifner(r).build();
}

}  // namespace slimeccl
