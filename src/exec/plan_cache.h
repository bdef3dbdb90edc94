// Lowered plans of a communicator's recent ops. Training loops and perf tests repeat the same
// call (same buffers, count, type, peer) many times: taking its plan from here skips scheduling,
// lowering and their allocations, which cost more than moving a small message.
#pragma once

#include <memory>
#include <vector>

#include "src/exec/plan.h"

namespace slimeccl {

// Used only under the comm's executor lock (ExecLocks), so it needs no lock of its own.
class PlanCache {
 public:
  // A plan made for the same call, ready to run it; nullptr when there is none.
  std::unique_ptr<OpPlan> take(const OpRecord& op, int rank);
  // Keeps a plan that ran to completion, unless it holds too much memory; drops the least
  // recently used one when full.
  void keep(std::unique_ptr<OpPlan> plan);

 private:
  static constexpr size_t kMaxPlans = 16;
  static constexpr size_t kMaxPlanBytes = 1 << 20;

  std::vector<std::unique_ptr<OpPlan>> plans_;  // least recently used first
};

}  // namespace slimeccl
