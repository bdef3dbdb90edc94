#include "tools/slimeccl-sim/alpha_beta.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace slimeccl::sim {
namespace {

// Plays the steps out in the order they become ready; ties go to the lower step number.
class TimedRun {
 public:
  TimedRun(const ScheduleGraph& graph, const CostModel& cost)
      : graph_(graph), cost_(cost), readyAt_(graph.stepCount(), 0.0), waitsLeft_(graph.stepCount()),
        senderFreeAt_(static_cast<size_t>(graph.nranks()), 0.0) {}

  bool run(double* microseconds, std::string* error) {
    for (size_t step = 0; step < graph_.stepCount(); ++step) {
      waitsLeft_[step] = static_cast<uint8_t>(graph_.waitCount(step));
      if (waitsLeft_[step] == 0) ready_.emplace(0.0, step);
    }
    double last = 0.0;
    size_t completed = 0;
    while (!ready_.empty()) {
      const auto [readyAt, step] = ready_.top();
      ready_.pop();
      const double done = complete(step, readyAt);
      last = std::max(last, done);
      ++completed;
      graph_.forEachWaiter(step, [&](size_t waiter) {
        readyAt_[waiter] = std::max(readyAt_[waiter], done);
        if (--waitsLeft_[waiter] == 0) ready_.emplace(readyAt_[waiter], waiter);
      });
    }
    if (completed != graph_.stepCount()) {
      *error = describeStuckStep();
      return false;
    }
    *microseconds = last;
    return true;
  }

 private:
  double complete(size_t step, double readyAt) {
    if (graph_.kind(step) != StepKind::Send) return readyAt;
    double& senderFree = senderFreeAt_[static_cast<size_t>(graph_.rankOf(step))];
    senderFree = std::max(senderFree, readyAt) + messageMicroseconds(cost_, graph_.bytes(step));
    return senderFree;
  }

  std::string describeStuckStep() const {
    for (size_t step = 0; step < graph_.stepCount(); ++step) {
      if (waitsLeft_[step] == 0) continue;
      const int rank = graph_.rankOf(step);
      return fmt::format("deadlock: rank {} step {} never becomes ready", rank, step - graph_.firstStep(rank));
    }
    return "deadlock";
  }

  using ReadyStep = std::pair<double, size_t>;

  const ScheduleGraph& graph_;
  const CostModel& cost_;
  std::vector<double> readyAt_;
  std::vector<uint8_t> waitsLeft_;
  std::vector<double> senderFreeAt_;
  std::priority_queue<ReadyStep, std::vector<ReadyStep>, std::greater<>> ready_;
};

}  // namespace

double messageMicroseconds(const CostModel& cost, uint64_t bytes) {
  // gigabytesPerSecond * 1e3 bytes leave per microsecond.
  return cost.alphaMicroseconds + static_cast<double>(bytes) / (cost.gigabytesPerSecond * 1.0e3);
}

bool alphaBetaMicroseconds(const ScheduleGraph& graph, const CostModel& cost, double* microseconds,
                           std::string* error) {
  return TimedRun(graph, cost).run(microseconds, error);
}

}  // namespace slimeccl::sim
