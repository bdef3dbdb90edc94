// Scatter + AllGather Broadcast (docs/algorithms.md), for large vectors. The vector is cut into N
// parts (partOf); with ranks numbered relative to the root, part v belongs to rank v.
//  1. Binomial scatter: rank v's subtree is ranks v .. v + lowbit(v) - 1 (the root's: all), and
//     their parts are contiguous: v receives them from its parent and passes each child its
//     subtree's parts.
//  2. Ring AllGather of the parts, v -> v-1: step s sends part v + s and receives part v + s + 1,
//     except parts the receiver already holds from the scatter. So the root receives nothing,
//     every other rank receives each part it lacks once, and no receive overwrites data in use.
// Parts are uneven, and empty when count < N; steps that would move nothing are left out.
#include <algorithm>

#include "algorithms/catalog.h"
#include "algorithms/partition.h"

namespace slimeccl {
namespace {

class ScatterAllGather {
 public:
  explicit ScatterAllGather(const ScheduleRequest& r)
      : r_(r), n_(r.nranks), v_((r.rank - r.root + r.nranks) % r.nranks) {}

  Schedule build() {
    // Out of place the root reads from the user's buffer and copies it into its own result.
    if (v_ == 0 && !r_.inPlace) add(Step{StepKind::Copy, -1, atRoot(parts(0, n_)), parts(0, n_)});
    const int scattered = scatter();
    allGatherRing(scattered);
    return schedule_;
  }

 private:
  struct Subtree {
    int first;
    int n;
  };

  Subtree subtreeOf(int v) const { return v == 0 ? Subtree{0, n_} : Subtree{v, std::min(v & -v, n_ - v)}; }
  bool holdsAfterScatter(int v, int part) const {
    const Subtree t = subtreeOf(v);
    return part >= t.first && part < t.first + t.n;
  }
  BufferRange parts(int first, int n) const {
    const ByteBlock b = partsOf(r_.count, r_.typeBytes, n_, first, n);
    return BufferRange{BufferId::Recv, b.offset, b.bytes};
  }
  BufferRange partsOfSubtree(int v) const { return parts(subtreeOf(v).first, subtreeOf(v).n); }
  // What the root sends: out of place its data is still in the Send buffer, at the same offsets.
  BufferRange atRoot(BufferRange range) const {
    if (v_ == 0 && !r_.inPlace) range.buffer = BufferId::Send;
    return range;
  }
  int rankOf(int v) const { return (v + r_.root) % n_; }
  int add(const Step& step) {
    schedule_.steps.push_back(step);
    return static_cast<int>(schedule_.steps.size()) - 1;
  }

  // Returns the receive that brought this rank's subtree, or -1 (the root; or nothing to receive).
  int scatter() {
    int received = -1;
    int childBits = 1;
    while (childBits < n_) childBits *= 2;
    if (v_ != 0) {
      childBits = v_ & -v_;
      const BufferRange mine = partsOfSubtree(v_);
      if (mine.bytes > 0) received = add(Step{StepKind::Recv, rankOf(v_ - childBits), {}, mine});
    }
    for (int distance = childBits / 2; distance >= 1; distance /= 2) {
      const int child = v_ + distance;
      if (child >= n_) continue;
      const BufferRange theirs = partsOfSubtree(child);
      if (theirs.bytes > 0) add(Step{StepKind::Send, rankOf(child), atRoot(theirs), {}, received});
    }
    return received;
  }

  // The ring runs downwards, root -> N-1 -> ... -> 1, so that what a rank sends starts with the
  // parts it holds (its subtree's: v, v+1, ...) and goes on with the parts it receives, each
  // forwarded chunk by chunk in the step after it arrives.
  void allGatherRing(int scattered) {
    const int downstream = (v_ - 1 + n_) % n_, upstream = (v_ + 1) % n_;
    int previousRecv = -1;
    bool firstRecv = true;
    for (int step = 0; step < n_ - 1; ++step) {
      const int sendPart = (v_ + step) % n_, recvPart = (v_ + step + 1) % n_;
      const BufferRange outgoing = parts(sendPart, 1);
      if (outgoing.bytes > 0 && !holdsAfterScatter(downstream, sendPart)) {
        const int source = holdsAfterScatter(v_, sendPart) ? scattered : previousRecv;
        add(Step{StepKind::Send, rankOf(downstream), atRoot(outgoing), {}, source});
      }
      previousRecv = -1;
      const BufferRange incoming = parts(recvPart, 1);
      if (incoming.bytes > 0 && !holdsAfterScatter(v_, recvPart)) {
        // The first receive waits for the scatter, so that the sends of received parts become
        // ready after those of held parts, in list order.
        previousRecv = add(Step{StepKind::Recv, rankOf(upstream), {}, incoming, firstRecv ? scattered : -1});
        firstRecv = false;
      }
    }
  }

  const ScheduleRequest& r_;
  const int n_, v_;
  Schedule schedule_;
};

}  // namespace

Schedule broadcastScatterAllGather(const ScheduleRequest& r) {
  if (r.count * r.typeBytes == 0) return Schedule{};
  return ScatterAllGather(r).build();
}

}  // namespace slimeccl
