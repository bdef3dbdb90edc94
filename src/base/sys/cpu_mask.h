// The CPUs a rank may run on, as a fixed-size value that travels in the bootstrap table.
#pragma once

#include <cstdint>
#include <vector>

namespace slimeccl {

struct CpuMask {
  static constexpr int kWords = 16;  // CPUs 0..1023
  uint64_t words[kWords];

  // The calling thread's affinity (every CPU the machine has when it cannot be read).
  static CpuMask ofThisThread();
  int count() const;
  bool overlaps(const CpuMask& other) const;
  void add(const CpuMask& other);
};

// Whether the ranks whose CPUs overlap `mine` (itself included) outnumber the CPUs they have
// together: then a rank that spins holds a core a peer needs.
bool ranksOutnumberCores(const CpuMask& mine, const std::vector<CpuMask>& ranksOnHost);

}  // namespace slimeccl
