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
  Simulation(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers, const SimulationOptions& options)
      : schedules_(schedules), buffers_(buffers), options_(options), n_(static_cast<int>(schedules.size())) {}

  SimulationResult run() {
    result_.bytesSent.assign(n_, 0);
    result_.rounds.assign(n_, 0);
    done_.resize(n_);
    first_.assign(n_, 0);
    order_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      done_[r].assign(schedules_[r].steps.size(), false);
      buffers_[r].scratch.assign(schedules_[r].scratchBytes, 0);
      // The executor queues the traffic with one peer in one direction strictly in step order.
      for (size_t i = 0; i < schedules_[r].steps.size(); ++i) {
        const Step& st = schedules_[r].steps[i];
        if (isLocal(st.kind)) continue;
        order_[r][{st.peer, st.kind == StepKind::Send}].steps.push_back(i);
      }
    }
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < n_; ++r) {
        while (first_[r] < done_[r].size() && done_[r][first_[r]]) ++first_[r];
        for (size_t i = first_[r]; i < schedules_[r].steps.size(); ++i) {
          if (done_[r][i] || !ready(r, i)) continue;
          int outcome = runStep(r, i);
          if (outcome < 0) return failure(error_);
          if (outcome > 0) {
            done_[r][i] = true;
            moved = true;
            const Step& st = schedules_[r].steps[i];
            if (!isLocal(st.kind)) ++order_[r][{st.peer, st.kind == StepKind::Send}].next;
          }
        }
      }
    }
    for (int r = 0; r < n_; ++r)
      for (size_t i = 0; i < done_[r].size(); ++i)
        if (!done_[r][i]) return failure(fmt::format("deadlock: rank {} is stuck at step {} ({})", r, i,
                                                      describeSchedule(Schedule{{schedules_[r].steps[i]}, 0})));
    for (const auto& [pair, wire] : wires_)
      if (!wire.empty())
        return failure(fmt::format("{} message(s) from {} to {} were never received", wire.size(), pair.first,
                                   pair.second));
    return result_;
  }

 private:
  bool ready(int r, size_t i) const {
    const Step& st = schedules_[r].steps[i];
    if (st.dependsOn >= 0 && !done_[r][st.dependsOn]) return false;
    if (!isLocal(st.kind)) {
      const PeerQueue& q = order_[r].at({st.peer, st.kind == StepKind::Send});
      return q.steps[q.next] == i;
    }
    for (size_t k = 0; k < i; ++k)
      if (isLocal(schedules_[r].steps[k].kind) && !done_[r][k]) return false;
    return true;
  }

  char* resolve(int r, size_t i, const BufferRange& range) {
    RankBuffers& b = buffers_[r];
    std::vector<char>& v = range.buffer == BufferId::Send ? b.send : range.buffer == BufferId::Recv ? b.recv : b.scratch;
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
    if (st.kind != StepKind::Copy && st.kind != StepKind::Scale && st.kind != StepKind::Send && st.kind != StepKind::Recv &&
        (st.dst.bytes % elem != 0)) {
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
  std::vector<size_t> first_;  // per rank: its first step not done yet
  std::vector<std::map<std::pair<int, bool>, PeerQueue>> order_;  // per rank: (peer, sending)
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> wires_;
  std::string error_;
};

}  // namespace

SimulationResult simulate(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers,
                          const SimulationOptions& options) {
  return Simulation(schedules, buffers, options).run();
}

}  // namespace slimeccl
