#include "algorithms/simulator.h"

#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <map>

#include "algorithms/reduce.h"

namespace slimeccl {
namespace {

size_t typeBytes(slimecclDataType_t type) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return type >= 0 && type < slimecclNumTypes ? kSizes[type] : 1;
}

SimulationResult failure(std::string error) {
  SimulationResult r;
  r.ok = false;
  r.error = std::move(error);
  return r;
}

bool isLocal(StepKind kind) { return kind == StepKind::Copy || kind == StepKind::Reduce || kind == StepKind::Scale; }

class Simulation {
 public:
  Simulation(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers,
             const SimulationOptions& options)
      : schedules_(schedules), buffers_(buffers), options_(options), n_(static_cast<int>(schedules.size())) {}

  // A worklist: a step is looked at again only when something it waits for has happened (its
  // dependency ran, the step before it in its queue ran, or a message came for it), so the cost is
  // linear in the steps, not in steps times rounds.
  SimulationResult run() {
    result_.bytesSent.assign(n_, 0);
    result_.rounds.assign(n_, 0);
    done_.resize(n_);
    order_.resize(n_);
    locals_.resize(n_);
    nextLocal_.assign(n_, 0);
    dependents_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const std::vector<Step>& steps = schedules_[r].steps;
      done_[r].assign(steps.size(), false);
      dependents_[r].assign(steps.size(), {});
      buffers_[r].scratch.assign(schedules_[r].scratchBytes, 0);
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        if (st.dependsOn >= 0 && static_cast<size_t>(st.dependsOn) < steps.size())
          dependents_[r][st.dependsOn].push_back(i);
        // The executor queues the traffic with one peer in one direction strictly in step order.
        if (isLocal(st.kind))
          locals_[r].push_back(i);
        else
          order_[r][{st.peer, st.kind == StepKind::Send}].steps.push_back(i);
      }
      for (const auto& [key, queue] : order_[r]) work_.push_back({r, queue.steps.front()});
      if (!locals_[r].empty()) work_.push_back({r, locals_[r].front()});
    }
    while (!work_.empty()) {
      auto [r, i] = work_.front();
      work_.pop_front();
      if (done_[r][i] || !ready(r, i)) continue;
      int outcome = runStep(r, i);
      if (outcome < 0) return failure(error_);
      if (outcome > 0) finish(r, i);
    }
    for (int r = 0; r < n_; ++r)
      for (size_t i = 0; i < done_[r].size(); ++i)
        if (!done_[r][i])
          return failure(fmt::format("deadlock: rank {} is stuck at step {} ({})", r, i,
                                     describeSchedule(Schedule{{schedules_[r].steps[i]}, 0})));
    for (const auto& [pair, wire] : wires_)
      if (!wire.empty())
        return failure(
            fmt::format("{} message(s) from {} to {} were never received", wire.size(), pair.first, pair.second));
    return result_;
  }

 private:
  // Marks the step done and queues the steps that may have been waiting for it.
  void finish(int r, size_t i) {
    done_[r][i] = true;
    const Step& st = schedules_[r].steps[i];
    for (size_t d : dependents_[r][i]) work_.push_back({r, d});
    if (isLocal(st.kind)) {
      if (++nextLocal_[r] < locals_[r].size()) work_.push_back({r, locals_[r][nextLocal_[r]]});
      return;
    }
    PeerQueue& q = order_[r].at({st.peer, st.kind == StepKind::Send});
    if (++q.next < q.steps.size()) work_.push_back({r, q.steps[q.next]});
    if (st.kind != StepKind::Send) return;
    // The peer's next receive from this rank may have been waiting for this message.
    auto theirs = order_[st.peer].find({r, false});
    if (theirs != order_[st.peer].end() && theirs->second.next < theirs->second.steps.size())
      work_.push_back({st.peer, theirs->second.steps[theirs->second.next]});
  }

  bool ready(int r, size_t i) const {
    const Step& st = schedules_[r].steps[i];
    // A dependency past the schedule's end never runs: the step shows up as a deadlock.
    if (st.dependsOn >= 0 && (static_cast<size_t>(st.dependsOn) >= done_[r].size() || !done_[r][st.dependsOn]))
      return false;
    if (!isLocal(st.kind)) {
      const PeerQueue& q = order_[r].at({st.peer, st.kind == StepKind::Send});
      return q.next < q.steps.size() && q.steps[q.next] == i;
    }
    return nextLocal_[r] < locals_[r].size() && locals_[r][nextLocal_[r]] == i;
  }

  char* resolve(int r, size_t i, const BufferRange& range) {
    RankBuffers& b = buffers_[r];
    std::vector<char>& v = range.buffer == BufferId::Send   ? b.send
                           : range.buffer == BufferId::Recv ? b.recv
                                                            : b.scratch;
    if (range.offset + range.bytes > v.size()) {
      const char* name = range.buffer == BufferId::Send ? "send" : range.buffer == BufferId::Recv ? "recv" : "scratch";
      error_ = fmt::format("rank {} step {}: range {}+{} exceeds the {} buffer of {} bytes", r, i, range.offset,
                           range.bytes, name, v.size());
      return nullptr;
    }
    return v.data() + range.offset;
  }

  // 1: ran, 0: waits for a message, -1: error.
  int runStep(int r, size_t i) {
    const Step& st = schedules_[r].steps[i];
    size_t elem = typeBytes(options_.type);
    if (st.kind != StepKind::Copy && st.kind != StepKind::Scale && st.kind != StepKind::Send &&
        st.kind != StepKind::Recv && (st.dst.bytes % elem != 0)) {
      error_ = fmt::format("rank {} step {}: {} bytes is not a whole number of elements", r, i, st.dst.bytes);
      return -1;
    }
    switch (st.kind) {
      case StepKind::Copy: {
        char* src = resolve(r, i, st.src);
        char* dst = resolve(r, i, st.dst);
        if (src == nullptr || dst == nullptr) return -1;
        if (st.src.bytes != st.dst.bytes) return mismatch(r, i);
        memmove(dst, src, st.src.bytes);
        return 1;
      }
      case StepKind::Reduce: {
        char* src = resolve(r, i, st.src);
        char* dst = resolve(r, i, st.dst);
        if (src == nullptr || dst == nullptr) return -1;
        if (st.src.bytes != st.dst.bytes) return mismatch(r, i);
        reduceArrays(dst, dst, src, st.dst.bytes / elem, options_.type, options_.op);
        return 1;
      }
      case StepKind::Scale: {
        char* dst = resolve(r, i, st.dst);
        if (dst == nullptr) return -1;
        divideArray(dst, st.dst.bytes / elem, options_.type, n_);
        return 1;
      }
      case StepKind::Send: {
        if (st.peer < 0 || st.peer >= n_) {
          error_ = fmt::format("rank {} step {}: peer {} out of range", r, i, st.peer);
          return -1;
        }
        char* src = resolve(r, i, st.src);
        if (src == nullptr) return -1;
        wires_[{r, st.peer}].emplace_back(src, src + st.src.bytes);
        result_.bytesSent[r] += st.src.bytes;
        ++result_.rounds[r];
        ++result_.messages;
        return 1;
      }
      case StepKind::Recv:
      case StepKind::RecvReduce: {
        if (st.peer < 0 || st.peer >= n_) {
          error_ = fmt::format("rank {} step {}: peer {} out of range", r, i, st.peer);
          return -1;
        }
        auto& wire = wires_[{st.peer, r}];
        if (wire.empty()) return 0;
        char* dst = resolve(r, i, st.dst);
        if (dst == nullptr) return -1;
        if (wire.front().size() != st.dst.bytes) {
          error_ = fmt::format("rank {} step {}: message of {} bytes from {} for a receive of {}", r, i,
                               wire.front().size(), st.peer, st.dst.bytes);
          return -1;
        }
        if (st.kind == StepKind::Recv) {
          memcpy(dst, wire.front().data(), st.dst.bytes);
        } else {
          char* src = resolve(r, i, st.src);
          if (src == nullptr) return -1;
          if (st.src.bytes != st.dst.bytes) return mismatch(r, i);
          reduceArrays(dst, src, wire.front().data(), st.dst.bytes / elem, options_.type, options_.op);
        }
        wire.pop_front();
        return 1;
      }
    }
    return -1;
  }

  int mismatch(int r, size_t i) {
    error_ = fmt::format("rank {} step {}: source and destination sizes differ", r, i);
    return -1;
  }

  const std::vector<Schedule>& schedules_;
  std::vector<RankBuffers>& buffers_;
  SimulationOptions options_;
  int n_;
  SimulationResult result_;
  struct PeerQueue {
    std::vector<size_t> steps;  // this rank's steps with one peer in one direction, in order
    size_t next = 0;
  };
  std::vector<std::vector<bool>> done_;
  std::vector<std::map<std::pair<int, bool>, PeerQueue>> order_;  // per rank: (peer, sending)
  std::vector<std::vector<size_t>> locals_;                       // per rank: its local steps, in order
  std::vector<size_t> nextLocal_;                                 // per rank: index into locals_
  std::vector<std::vector<std::vector<size_t>>> dependents_;      // per rank and step: steps after it
  std::deque<std::pair<int, size_t>> work_;                       // (rank, step) to look at again
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> wires_;
  std::string error_;
};

}  // namespace

SimulationResult simulate(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers,
                          const SimulationOptions& options) {
  return Simulation(schedules, buffers, options).run();
}

}  // namespace slimeccl
