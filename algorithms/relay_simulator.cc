#include "algorithms/relay_simulator.h"

#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "algorithms/reduce.h"

namespace slimeccl {
namespace {

// A flag as the device path keeps it: owned by one rank, set by another.
struct RelayFlagKey {
  int owner, setter;
  bool free;  // a free flag (the writer owns it), else a full flag (the reader owns it)
  RelayLane lane;
  int slot;
  bool operator<(const RelayFlagKey& o) const {
    return std::tie(owner, setter, free, lane, slot) < std::tie(o.owner, o.setter, o.free, o.lane, o.slot);
  }
};

std::string describeRelayStep(int rank, const RelayStep& s) {
  static const char* const kNames[] = {"Put", "AwaitFree", "Take", "Reduce", "Copy", "Signal", "Await"};
  std::string text =
      "rank " + std::to_string(rank) + " stream " + std::to_string(s.stream) + " " + kNames[static_cast<int>(s.kind)];
  if (s.kind == RelayStepKind::Put || s.kind == RelayStepKind::AwaitFree || s.kind == RelayStepKind::Take) {
    text += s.lane == RelayLane::Shared ? " shared lane" : " to-peer lane";
    text += " slot " + std::to_string(s.slot) + " peers";
    for (int p : s.peers) text += " " + std::to_string(p);
  }
  return text;
}

class RelaySimulation {
 public:
  RelaySimulation(const std::vector<RelayPlan>& plans, std::vector<RelayRankMemory>& ranks, size_t slotBytes,
                  slimecclDataType_t type, slimecclRedOp_t op, bool oneQueue)
      : plans_(plans), ranks_(ranks), n_(static_cast<int>(plans.size())), slotBytes_(slotBytes), type_(type), op_(op) {
    relays_.assign(n_, std::vector<char>(relayBytes(n_, slotBytes), 0));
    for (int r = 0; r < n_; ++r) {
      RelayRankMemory& rank = ranks_[r];
      if (rank.buffers.empty()) rank.buffers.resize(1);
      rank.buffers[kRelayLanding] = {rank.memory.size(), relayLandingBytes(n_, slotBytes)};
      rank.memory.resize(rank.memory.size() + rank.buffers[kRelayLanding].bytes, 0);
      const RelayPlan& plan = plans[r];
      const int queues = oneQueue ? 1 : plan.streams;
      streams_.emplace_back(queues);
      next_.emplace_back(queues, 0);
      signalsDone_.emplace_back();
      targets_.emplace_back(plan.steps.size(), 0);
      std::map<int, size_t> queued;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        const RelayStep& s = plan.steps[i];
        streams_[r][oneQueue ? 0 : s.stream].push_back(i);
        if (s.kind == RelayStepKind::Signal) ++queued[s.event];
        if (s.kind == RelayStepKind::Await) targets_[r][i] = queued[s.event];
      }
    }
  }

  RelayCheck run(RelayTurns turns, uint64_t seed) {
    std::mt19937_64 random(seed);
    // Drawn turns move one step; the others let the stream go as far as it can.
    const bool drawn = turns == RelayTurns::Random || turns == RelayTurns::OneQueue;
    for (;;) {
      std::vector<std::pair<int, int>> ready;
      bool left = false;
      for (int r = 0; r < n_; ++r)
        for (int s = 0; s < static_cast<int>(streams_[r].size()); ++s) {
          if (finished(r, s)) continue;
          left = true;
          if (canRunNext(r, s)) ready.emplace_back(r, s);
        }
      if (!left) return finalCheck();
      if (ready.empty()) return fail("the ranks wait for each other: " + blocked());
      const std::pair<int, int> pick = drawn                              ? ready[random() % ready.size()]
                                       : turns == RelayTurns::StreamFirst ? ready.front()
                                                                          : ready.back();
      const int r = pick.first, s = pick.second;
      do {
        if (!execute(r, step(r, s))) return check_;
        ++next_[r][s];
      } while (!drawn && !finished(r, s) && canRunNext(r, s));
    }
  }

 private:
  const RelayStep& step(int r, int s) const { return plans_[r].steps[streams_[r][s][next_[r][s]]]; }
  bool finished(int r, int s) const { return next_[r][s] == streams_[r][s].size(); }
  bool canRunNext(int r, int s) { return canRun(r, step(r, s), streams_[r][s][next_[r][s]]); }

  uint32_t& flag(int owner, int setter, bool free, RelayLane lane, int slot) {
    return flags_[RelayFlagKey{owner, setter, free, lane, slot}];
  }

  bool canRun(int r, const RelayStep& s, size_t index) {
    switch (s.kind) {
      case RelayStepKind::AwaitFree:
        for (int reader : s.peers)
          if (flag(r, reader, true, s.lane, s.slot) != 1) return false;
        return true;
      case RelayStepKind::Take: return flag(r, s.peers.front(), false, s.lane, s.slot) == 1;
      case RelayStepKind::Await: return signalsDone_[r][s.event] >= targets_[r][index];
      default: return true;
    }
  }

  // The bytes a span names in rank r's memory; null (with the check failed) where it leaves its buffer.
  char* at(int r, const RelaySpan& span, size_t bytes) {
    RelayRankMemory& rank = ranks_[r];
    if (span.buffer >= rank.buffers.size() || span.offset + bytes > rank.buffers[span.buffer].bytes) {
      fail("rank " + std::to_string(r) + ": a span of " + std::to_string(bytes) + " bytes at " +
           std::to_string(span.offset) + " leaves buffer " + std::to_string(span.buffer));
      return nullptr;
    }
    return rank.memory.data() + rank.buffers[span.buffer].offset + span.offset;
  }

  char* slot(RelayLane lane, int writer, int reader, int slot, size_t bytes) {
    if (bytes > slotBytes_) {
      fail("a chunk of " + std::to_string(bytes) + " bytes is larger than a slot");
      return nullptr;
    }
    return relays_[writer].data() + relaySlotOffset(lane, writer, reader, slot, slotBytes_);
  }

  bool execute(int r, const RelayStep& s) {
    switch (s.kind) {
      case RelayStepKind::Put: {
        const char* from = at(r, s.at, s.bytes);
        char* to = slot(s.lane, r, s.peers.front(), s.slot, s.bytes);
        if (from == nullptr || to == nullptr) return false;
        std::memcpy(to, from, s.bytes);
        for (int reader : s.peers) {
          uint32_t& full = flag(reader, r, false, s.lane, s.slot);
          if (full != 0)
            return failed(describeRelayStep(r, s) + ": the reader's flag is still set (a slot reused early)");
          full = 1;
        }
        return true;
      }
      case RelayStepKind::AwaitFree:
        for (int reader : s.peers) flag(r, reader, true, s.lane, s.slot) = 0;
        return true;
      case RelayStepKind::Take: {
        const int writer = s.peers.front();
        flag(r, writer, false, s.lane, s.slot) = 0;
        const char* from = slot(s.lane, writer, r, s.slot, s.bytes);
        char* to = at(r, s.at, s.bytes);
        if (from == nullptr || to == nullptr) return false;
        std::memcpy(to, from, s.bytes);
        uint32_t& free = flag(writer, r, true, s.lane, s.slot);
        if (free != 0) return failed(describeRelayStep(r, s) + ": the writer's free flag is still set");
        free = 1;
        return true;
      }
      case RelayStepKind::Copy: {
        char* to = at(r, s.at, s.bytes);
        const char* from = at(r, s.from, s.bytes);
        if (from == nullptr || to == nullptr) return false;
        std::memmove(to, from, s.bytes);
        return true;
      }
      case RelayStepKind::Reduce: return reduce(r, s);
      case RelayStepKind::Signal: ++signalsDone_[r][s.event]; return true;
      case RelayStepKind::Await: return true;
    }
    return true;
  }

  bool reduce(int r, const RelayStep& s) {
    const size_t bytes = s.count * typeSize(type_);
    if (s.sources.empty()) return failed(describeRelayStep(r, s) + ": no sources");
    const char* first = at(r, s.sources.front().span, bytes);
    if (first == nullptr) return false;
    std::vector<char> result(first, first + bytes);
    const slimecclRedOp_t op = op_ == slimecclAvg ? slimecclSum : op_;
    for (size_t k = 1; k < s.sources.size(); ++k) {
      const char* source = at(r, s.sources[k].span, bytes);
      if (source == nullptr) return false;
      reduceArrays(result.data(), result.data(), source, s.count, type_, op);
    }
    if (op_ == slimecclAvg) divideArray(result.data(), s.count, type_, n_);
    char* to = at(r, s.at, bytes);
    if (to == nullptr) return false;
    std::memcpy(to, result.data(), bytes);
    return true;
  }

  std::string blocked() {
    std::string text;
    for (int r = 0; r < n_; ++r)
      for (int s = 0; s < static_cast<int>(streams_[r].size()); ++s)
        if (!finished(r, s)) text += "[" + describeRelayStep(r, step(r, s)) + "] ";
    return text;
  }

  RelayCheck finalCheck() {
    for (const auto& [key, value] : flags_)
      if (value != 0)
        return fail("a flag of rank " + std::to_string(key.owner) + " set by rank " + std::to_string(key.setter) +
                    " is still set at the end");
    return check_;
  }

  RelayCheck fail(const std::string& error) {
    if (check_.ok) check_ = RelayCheck{false, error};
    return check_;
  }
  bool failed(const std::string& error) {
    fail(error);
    return false;
  }

  const std::vector<RelayPlan>& plans_;
  std::vector<RelayRankMemory>& ranks_;
  int n_;
  size_t slotBytes_;
  slimecclDataType_t type_;
  slimecclRedOp_t op_;
  std::vector<std::vector<char>> relays_;
  std::map<RelayFlagKey, uint32_t> flags_;
  std::vector<std::vector<std::vector<size_t>>> streams_;  // rank, stream: step indices in order
  std::vector<std::vector<size_t>> next_;                  // rank, stream: the next of them
  std::vector<std::map<int, size_t>> signalsDone_;         // rank, event: Signals reached
  std::vector<std::vector<size_t>> targets_;               // rank, step: an Await's Signals to wait for
  RelayCheck check_;
};

}  // namespace

RelayCheck simulateRelay(const std::vector<RelayPlan>& plans, std::vector<RelayRankMemory>& ranks, size_t slotBytes,
                         slimecclDataType_t type, slimecclRedOp_t op, RelayTurns turns, uint64_t seed) {
  RelaySimulation simulation(plans, ranks, slotBytes, type, op, turns == RelayTurns::OneQueue);
  return simulation.run(turns, seed);
}

}  // namespace slimeccl
