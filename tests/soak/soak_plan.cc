#include "soak_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace slimeccl_soak {
namespace {

constexpr int kMaxLiveSubComms = 4;
constexpr int kMaxColors = 3;
constexpr int kMaxMessages = 8;

size_t typeBytes(slimecclDataType_t type) {
  static const size_t kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return kBytes[type];
}

// Mostly small messages, some empty, a few over a megabyte (so that large-message paths run too).
size_t randomCount(std::mt19937_64& rng, slimecclDataType_t type) {
  uint64_t r = rng() % 100;
  size_t bytes;
  if (r < 8) return 0;
  if (r < 25)
    bytes = 1 + rng() % 64;
  else if (r < 80)
    bytes = 1 + rng() % 8192;
  else if (r < 97)
    bytes = 8192 + rng() % (128 << 10);
  else
    bytes = (1 << 20) + rng() % 4096;
  return std::max<size_t>(1, bytes / typeBytes(type));
}

Op opOn(OpKind kind, int slot) {
  Op op;
  op.kind = kind;
  op.slot = slot;
  return op;
}

slimecclDataType_t randomType(std::mt19937_64& rng) {
  return static_cast<slimecclDataType_t>(rng() % slimecclNumTypes);
}

class Planner {
 public:
  Planner(uint64_t seed, int nranks) : rng_(seed) {
    Members world(nranks);
    std::iota(world.begin(), world.end(), 0);
    plan_.slots.push_back(world);
  }

  Plan make(int nops) {
    for (int i = 0; i < nops; ++i) {
      int left = nops - i;
      // Keep enough ops at the end to destroy every live sub-communicator.
      if (static_cast<int>(live_.size()) >= left) {
        destroy();
        continue;
      }
      uint64_t r = rng_() % 100;
      bool canSplit =
          static_cast<int>(live_.size()) < kMaxLiveSubComms && left - 1 > static_cast<int>(live_.size()) + kMaxColors;
      if (r < 40)
        allGather();
      else if (r < 80)
        group();
      else if (r < 90 && canSplit)
        split();
      else if (!live_.empty())
        destroy();
      else
        group();
    }
    return std::move(plan_);
  }

 private:
  int randomSlot() {
    size_t pick = rng_() % (live_.size() + 1);
    return pick == live_.size() ? 0 : live_[pick];
  }

  void allGather() {
    Op op = opOn(OpKind::AllGather, randomSlot());
    op.type = randomType(rng_);
    op.count = randomCount(rng_, op.type);
    op.inPlace = rng_() % 2 == 0;
    plan_.ops.push_back(op);
  }

  void group() {
    Op op = opOn(OpKind::P2PGroup, randomSlot());
    op.type = randomType(rng_);
    int n = static_cast<int>(plan_.slots[op.slot].size());
    int messages = 1 + static_cast<int>(rng_() % kMaxMessages);
    for (int m = 0; m < messages; ++m) {
      int src = static_cast<int>(rng_() % n), dst = static_cast<int>(rng_() % n);
      op.messages.push_back(Message{src, dst, randomCount(rng_, op.type)});
    }
    plan_.ops.push_back(op);
  }

  void split() {
    Op op = opOn(OpKind::Split, randomSlot());
    const Members parent = plan_.slots[op.slot];  // a copy: new slots are appended below
    std::map<int, std::vector<int>> byColor;      // color -> parent ranks
    for (size_t r = 0; r < parent.size(); ++r) {
      int c = static_cast<int>(rng_() % (kMaxColors + 1));
      op.colors.push_back(c == kMaxColors ? SLIMECCL_SPLIT_NOCOLOR : c);
      op.keys.push_back(static_cast<int>(rng_() % 3));
      if (op.colors.back() != SLIMECCL_SPLIT_NOCOLOR) byColor[op.colors.back()].push_back(static_cast<int>(r));
    }
    op.firstNewSlot = static_cast<int>(plan_.slots.size());
    for (auto& [color, ranks] : byColor) {
      // Ordered by key, then by parent rank (the vector is in parent-rank order already).
      std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return op.keys[a] < op.keys[b]; });
      Members members;
      for (int r : ranks) members.push_back(parent[r]);
      live_.push_back(static_cast<int>(plan_.slots.size()));
      plan_.slots.push_back(members);
    }
    plan_.ops.push_back(op);
  }

  void destroy() {
    size_t pick = rng_() % live_.size();
    plan_.ops.push_back(opOn(OpKind::Destroy, live_[pick]));
    live_.erase(live_.begin() + pick);
  }

  std::mt19937_64 rng_;
  Plan plan_;
  std::vector<int> live_;  // sub-communicator slots not destroyed yet
};

}  // namespace

Plan makePlan(uint64_t seed, int nranks, int nops) { return Planner(seed, nranks).make(nops); }

PlanCounts countOps(const Plan& plan) {
  PlanCounts counts;
  for (const Op& op : plan.ops) {
    switch (op.kind) {
      case OpKind::AllGather: ++counts.allGathers; break;
      case OpKind::P2PGroup:
        ++counts.groups;
        counts.messages += static_cast<int>(op.messages.size());
        break;
      case OpKind::Split: ++counts.splits; break;
      case OpKind::Destroy: ++counts.destroys; break;
    }
  }
  return counts;
}

}  // namespace slimeccl_soak
