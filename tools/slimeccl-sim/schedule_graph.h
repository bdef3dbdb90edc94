// Every rank's schedule in a compact form that is enough to count traffic and to time the
// collective: step kinds, message sizes and what each step waits for, without buffer ranges.
// Ring AllReduce on 4096 ranks is tens of millions of steps, so schedules are added one at a time
// and need not be kept.
//
// A step waits for: its dependsOn; for a send, the rank's previous send to the same peer, and for a
// receive, the rank's previous receive from the same peer (the executor keeps one queue per peer
// and direction); for a local step, the rank's previous local step (local steps run in list order);
// for a receive, the send whose message it takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace slimeccl::sim {

struct RankTraffic {
  size_t sends = 0;  // messages the rank sends: its rounds
  size_t bytesSent = 0;
  size_t receives = 0;  // Recv and RecvReduce steps
};

class ScheduleGraph {
 public:
  static constexpr size_t kNoStep = SIZE_MAX;

  explicit ScheduleGraph(int nranks);

  // Adds the next rank's schedule (rank 0 first). Returns false with *error set when a step names a
  // peer outside the communicator or depends on a step that does not come before it.
  bool addRank(const Schedule& schedule, std::string* error);
  // Once every rank is added, pairs each receive with its send: the k-th receive of rank p from
  // rank q takes rank q's k-th send to rank p. Returns false with *error set when they do not pair up.
  bool matchMessages(std::string* error);

  int nranks() const { return nranks_; }
  size_t stepCount() const { return kind_.size(); }
  const std::vector<RankTraffic>& traffic() const { return traffic_; }

  // Steps are numbered across all ranks: rank r's step i is firstStep(r) + i.
  size_t firstStep(int rank) const { return firstStep_[static_cast<size_t>(rank)]; }
  size_t stepsOf(int rank) const { return firstStep(rank + 1) - firstStep(rank); }
  int rankOf(size_t step) const;
  StepKind kind(size_t step) const { return static_cast<StepKind>(kind_[step]); }
  uint64_t bytes(size_t step) const { return bytes_[step]; }
  // How many steps this one waits for.
  unsigned waitCount(size_t step) const { return waitCount_[step]; }

  // Calls visit(next) for every step that waits for `step`.
  template <typename Visit>
  void forEachWaiter(size_t step, Visit&& visit) const {
    for (size_t waiter = stepAfter(step, firstDependentDistance_[step]); waiter != kNoStep;
         waiter = stepAfter(waiter, nextSiblingDistance_[waiter])) {
      visit(waiter);
    }
    if (const size_t next = stepAfter(step, nextInQueueDistance_[step]); next != kNoStep) visit(next);
    if (receiverOf_[step] != kNoStep) visit(receiverOf_[step]);
  }

 private:
  static size_t stepAfter(size_t step, uint32_t distance) { return distance == 0 ? kNoStep : step + distance; }
  int addedRanks() const { return static_cast<int>(firstStep_.size()) - 1; }

  int nranks_;
  std::vector<size_t> firstStep_;  // per added rank, then the total
  std::vector<uint8_t> kind_;
  std::vector<int32_t> peer_;    // transfers only, -1 for local steps
  std::vector<uint64_t> bytes_;  // sends: bytes sent; 0 for other steps
  std::vector<uint8_t> waitCount_;
  // Distances forward within the rank, 0 for none: the first step that depends on this one, the next
  // step that depends on the same step as this one, the next step of this one's queue.
  std::vector<uint32_t> firstDependentDistance_;
  std::vector<uint32_t> nextSiblingDistance_;
  std::vector<uint32_t> nextInQueueDistance_;
  std::vector<size_t> receiverOf_;  // sends: the receive that takes the message
  std::vector<RankTraffic> traffic_;
};

}  // namespace slimeccl::sim
