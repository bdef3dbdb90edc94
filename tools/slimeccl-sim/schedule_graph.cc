#include "tools/slimeccl-sim/schedule_graph.h"

#include <fmt/format.h>

#include <algorithm>

namespace slimeccl::sim {
namespace {

bool isReceive(StepKind kind) { return kind == StepKind::Recv || kind == StepKind::RecvReduce; }

bool isTransfer(StepKind kind) { return kind == StepKind::Send || isReceive(kind); }

uint32_t distance(size_t from, size_t to) { return static_cast<uint32_t>(to - from); }

}  // namespace

ScheduleGraph::ScheduleGraph(int nranks) : nranks_(nranks), firstStep_{0} {}

int ScheduleGraph::rankOf(size_t step) const {
  return static_cast<int>(std::upper_bound(firstStep_.begin(), firstStep_.end(), step) - firstStep_.begin()) - 1;
}

bool ScheduleGraph::addRank(const Schedule& schedule, std::string* error) {
  const int rank = addedRanks();
  const size_t first = kind_.size();
  // Per queue, the global index of its latest step; per step, of its latest dependent so far.
  std::vector<size_t> lastSendTo(static_cast<size_t>(nranks_), kNoStep);
  std::vector<size_t> lastReceiveFrom(static_cast<size_t>(nranks_), kNoStep);
  size_t lastLocal = kNoStep;
  std::vector<size_t> lastDependent(schedule.steps.size(), kNoStep);
  RankTraffic traffic;
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& step = schedule.steps[i];
    const size_t global = first + i;
    if (step.dependsOn >= static_cast<int>(i)) {
      *error =
          fmt::format("rank {} step {} depends on step {}, which does not come before it", rank, i, step.dependsOn);
      return false;
    }
    const bool transfer = isTransfer(step.kind);
    if (transfer && (step.peer < 0 || step.peer >= nranks_)) {
      *error = fmt::format("rank {} step {} names peer {} of {} ranks", rank, i, step.peer, nranks_);
      return false;
    }
    kind_.push_back(static_cast<uint8_t>(step.kind));
    peer_.push_back(transfer ? step.peer : -1);
    bytes_.push_back(step.kind == StepKind::Send ? step.src.bytes : 0);
    firstDependentDistance_.push_back(0);
    nextSiblingDistance_.push_back(0);
    nextInQueueDistance_.push_back(0);
    receiverOf_.push_back(kNoStep);
    uint8_t waits = isReceive(step.kind) ? 1 : 0;  // its message

    if (step.dependsOn >= 0) {
      ++waits;
      const size_t dependency = first + static_cast<size_t>(step.dependsOn);
      size_t& latest = lastDependent[static_cast<size_t>(step.dependsOn)];
      if (latest == kNoStep) {
        firstDependentDistance_[dependency] = distance(dependency, global);
      } else {
        nextSiblingDistance_[latest] = distance(latest, global);
      }
      latest = global;
    }
    size_t& queueTail = step.kind == StepKind::Send ? lastSendTo[static_cast<size_t>(step.peer)]
                        : transfer                  ? lastReceiveFrom[static_cast<size_t>(step.peer)]
                                                    : lastLocal;
    if (queueTail != kNoStep) {
      ++waits;
      nextInQueueDistance_[queueTail] = distance(queueTail, global);
    }
    queueTail = global;
    waitCount_.push_back(waits);

    if (step.kind == StepKind::Send) {
      ++traffic.sends;
      traffic.bytesSent += step.src.bytes;
    }
    if (isReceive(step.kind)) ++traffic.receives;
  }
  firstStep_.push_back(kind_.size());
  traffic_.push_back(traffic);
  return true;
}

bool ScheduleGraph::matchMessages(std::string* error) {
  if (addedRanks() != nranks_) {
    *error = fmt::format("{} of {} ranks have a schedule", addedRanks(), nranks_);
    return false;
  }
  // Each rank's sends, ordered by destination and, for one destination, in list order.
  std::vector<size_t> sendsByPeer;
  std::vector<size_t> firstSendOf{0};
  for (int rank = 0; rank < nranks_; ++rank) {
    const size_t begin = sendsByPeer.size();
    for (size_t step = firstStep(rank); step < firstStep(rank + 1); ++step) {
      if (kind(step) == StepKind::Send) sendsByPeer.push_back(step);
    }
    std::stable_sort(sendsByPeer.begin() + static_cast<ptrdiff_t>(begin), sendsByPeer.end(),
                     [this](size_t a, size_t b) { return peer_[a] < peer_[b]; });
    firstSendOf.push_back(sendsByPeer.size());
  }
  const auto byPeer = [this](size_t send, int peer) { return peer_[send] < peer; };
  std::vector<uint32_t> receivedFrom(static_cast<size_t>(nranks_));
  for (int rank = 0; rank < nranks_; ++rank) {
    std::fill(receivedFrom.begin(), receivedFrom.end(), 0);
    for (size_t step = firstStep(rank); step < firstStep(rank + 1); ++step) {
      if (!isReceive(kind(step))) continue;
      const auto source = static_cast<size_t>(peer_[step]);
      const uint32_t ordinal = receivedFrom[source]++;
      const auto sourceSends = sendsByPeer.begin() + static_cast<ptrdiff_t>(firstSendOf[source]);
      const auto sourceEnd = sendsByPeer.begin() + static_cast<ptrdiff_t>(firstSendOf[source + 1]);
      const auto toRank = std::lower_bound(sourceSends, sourceEnd, rank, byPeer);
      const auto pastRank = std::lower_bound(toRank, sourceEnd, rank + 1, byPeer);
      if (ordinal >= static_cast<size_t>(pastRank - toRank)) {
        *error = fmt::format("rank {} step {} receives message {} from rank {}, which sends only {} to it", rank,
                             step - firstStep(rank), ordinal + 1, source, pastRank - toRank);
        return false;
      }
      receiverOf_[*(toRank + ordinal)] = step;
    }
  }
  for (const size_t send : sendsByPeer) {
    if (receiverOf_[send] != kNoStep) continue;
    const int sender = rankOf(send);
    *error = fmt::format("rank {} step {} sends to rank {}, which never receives it", sender, send - firstStep(sender),
                         peer_[send]);
    return false;
  }
  return true;
}

}  // namespace slimeccl::sim
