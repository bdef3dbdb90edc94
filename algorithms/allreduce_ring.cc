// Ring AllReduce (docs/algorithms.md): the vector is cut into N parts (uneven when N does not
// divide the count, empty ones when the count is below N). A ring ReduceScatter leaves part r
// complete on rank r, then a ring AllGather passes the complete parts around:
//   ReduceScatter step s: send part (r - s - 1) to r + 1, receive part (r - s - 2) from r - 1 and
//                         reduce it with the own input part.
//   AllGather step t:     send part (r - t) to r + 1, receive part (r - t - 1) from r - 1.
// A part received in one step is the one sent in the next, so the executor forwards it chunk by
// chunk as it lands. Empty parts take no steps.
//
// Everything happens in recv: out of place the first reduction of a part reads the input from
// send and writes recv, so no copy is needed; in place the input is already in recv. With avg,
// each rank divides its complete part before the AllGather hands it out.
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/partition.h"
#include "algorithms/schedule_builder.h"

namespace slimeccl {
namespace {

class RingAllReduce {
 public:
  explicit RingAllReduce(const ScheduleRequest& r)
      : r_(r), n_(r.nranks), next_((r.rank + 1) % n_), prev_((r.rank - 1 + n_) % n_),
        input_(r.inPlace ? BufferId::Recv : BufferId::Send), reducedAt_(n_, -1), sentAt_(n_, -1), gatheredAt_(n_, -1) {}

  Schedule build() {
    reduceScatter();
    int complete = reducedAt_[r_.rank];
    if (r_.op == slimecclAvg && !isEmpty(r_.rank))
      complete = addStep(s_, Step{StepKind::Scale, -1, {}, part(BufferId::Recv, r_.rank), complete});
    gatheredAt_[r_.rank] = complete;
    allGather();
    return s_;
  }

 private:
  int wrap(int p) const { return (p % n_ + n_) % n_; }
  BufferRange part(BufferId buffer, int p) const {
    ByteBlock block = partOf(r_.count, r_.typeBytes, n_, wrap(p));
    return BufferRange{buffer, block.offset, block.bytes};
  }
  bool isEmpty(int p) const { return part(BufferId::Recv, p).bytes == 0; }

  void reduceScatter() {
    for (int step = 0; step < n_ - 1; ++step) {
      const int sendPart = wrap(r_.rank - step - 1), recvPart = wrap(r_.rank - step - 2);
      if (!isEmpty(sendPart)) {
        // The first part sent is plain input; later ones are partial results reduced in recv.
        const BufferRange sent = step == 0 ? part(input_, sendPart) : part(BufferId::Recv, sendPart);
        sentAt_[sendPart] = addStep(s_, Step{StepKind::Send, next_, sent, {}, reducedAt_[sendPart]});
      }
      if (!isEmpty(recvPart))
        reducedAt_[recvPart] =
            addStep(s_, Step{StepKind::RecvReduce, prev_, part(input_, recvPart), part(BufferId::Recv, recvPart)});
    }
  }

  void allGather() {
    for (int step = 0; step < n_ - 1; ++step) {
      const int sendPart = wrap(r_.rank - step), recvPart = wrap(r_.rank - step - 1);
      if (!isEmpty(sendPart))
        addStep(s_, Step{StepKind::Send, next_, part(BufferId::Recv, sendPart), {}, gatheredAt_[sendPart]});
      // The part lands where this rank's ReduceScatter send read it: wait until that has left.
      if (!isEmpty(recvPart))
        gatheredAt_[recvPart] =
            addStep(s_, Step{StepKind::Recv, prev_, {}, part(BufferId::Recv, recvPart), sentAt_[recvPart]});
    }
  }

  const ScheduleRequest& r_;
  const int n_, next_, prev_;
  const BufferId input_;
  std::vector<int> reducedAt_;   // per part: this rank's reduction of it
  std::vector<int> sentAt_;      // per part: this rank's ReduceScatter send of it
  std::vector<int> gatheredAt_;  // per part: the step after which recv holds it complete
  Schedule s_;
};

}  // namespace

Schedule allreduceRing(const ScheduleRequest& r) {
  if (r.count == 0) return Schedule{};
  if (r.nranks == 1) return singleRankReduction(r);
  return RingAllReduce(r).build();
}

}  // namespace slimeccl
