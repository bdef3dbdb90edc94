#include "src/exec/plan_cache.h"

#include <algorithm>

namespace slimeccl {
namespace {

// Everything a plan is a function of, besides the communicator (fixed per cache).
bool sameCall(const OpRecord& a, const OpRecord& b) {
  return a.coll == b.coll && a.sendbuff == b.sendbuff && a.recvbuff == b.recvbuff && a.count == b.count &&
         a.type == b.type && a.redOp == b.redOp && a.root == b.root && a.peer == b.peer;
}

size_t heldBytes(const OpPlan& plan) {
  size_t bytes = plan.scratch.size();
  for (const StagingBuffer& s : plan.staging) bytes += s.size();
  for (const auto& s : plan.sessions) bytes += s->stagingBytes;
  return bytes;
}

}  // namespace

std::unique_ptr<OpPlan> PlanCache::take(const OpRecord& op, int rank) {
  if (op.blockListener != nullptr) return nullptr;
  auto it = std::find_if(plans_.begin(), plans_.end(), [&](const auto& p) { return sameCall(p->op, op); });
  if (it == plans_.end()) return nullptr;
  std::unique_ptr<OpPlan> plan = std::move(*it);
  plans_.erase(it);
  rearmPlan(plan.get(), op, rank);
  return plan;
}

void PlanCache::keep(std::unique_ptr<OpPlan> plan) {
  if (plan->op.blockListener != nullptr || heldBytes(*plan) > kMaxPlanBytes) return;
  if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
  plans_.push_back(std::move(plan));
}

}  // namespace slimeccl
