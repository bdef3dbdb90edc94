// The soak test's script: a random but reproducible sequence of ops over the world communicator and
// the sub-communicators split from it. Every rank holds the same plan (the same seed gives the same
// plan), so each knows every op's members, sizes and expected data without asking the others.
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace slimeccl_soak {

enum class OpKind { AllGather, P2PGroup, Split, Destroy };

// One Send/Recv pair inside a group, in ranks of the op's communicator (src == dst is allowed).
struct Message {
  int src;
  int dst;
  size_t count;
};

struct Op {
  OpKind kind = OpKind::AllGather;
  int slot = 0;  // the communicator the op runs on (Split: the parent); slot 0 is the world
  slimecclDataType_t type = slimecclUint8;
  size_t count = 0;               // AllGather: elements per rank
  bool inPlace = false;           // AllGather
  std::vector<Message> messages;  // P2PGroup, in call order per (src, dst) pair
  // Split: per parent rank, its color (or SLIMECCL_SPLIT_NOCOLOR) and key, and the slot that each
  // color's new communicator takes (firstNewSlot + index of the color in ascending order).
  std::vector<int> colors;
  std::vector<int> keys;
  int firstNewSlot = -1;
};

// Members of a live communicator, as world ranks in the order of their ranks in it.
using Members = std::vector<int>;

struct Plan {
  std::vector<Op> ops;
  // Members of every slot ever created, indexed by slot; a destroyed slot keeps its entry.
  std::vector<Members> slots;
};

struct PlanCounts {
  int allGathers = 0;
  int groups = 0;
  int messages = 0;
  int splits = 0;
  int destroys = 0;
};

// nops ops on nranks world ranks; the last ops destroy whatever sub-communicator is still live.
Plan makePlan(uint64_t seed, int nranks, int nops);
PlanCounts countOps(const Plan& plan);

}  // namespace slimeccl_soak
