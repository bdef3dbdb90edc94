#include "src/base/sys/cpu_mask.h"

#include <sched.h>
#include <unistd.h>

namespace slimeccl {

CpuMask CpuMask::ofThisThread() {
  CpuMask mask{};
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < kWords * 64 && cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) mask.words[cpu / 64] |= uint64_t{1} << (cpu % 64);
    return mask;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < online && cpu < kWords * 64; ++cpu) mask.words[cpu / 64] |= uint64_t{1} << (cpu % 64);
  return mask;
}

int CpuMask::count() const {
  int n = 0;
  for (uint64_t w : words) n += __builtin_popcountll(w);
  return n;
}

bool CpuMask::overlaps(const CpuMask& other) const {
  for (int i = 0; i < kWords; ++i)
    if ((words[i] & other.words[i]) != 0) return true;
  return false;
}

void CpuMask::add(const CpuMask& other) {
  for (int i = 0; i < kWords; ++i) words[i] |= other.words[i];
}

bool ranksOutnumberCores(const CpuMask& mine, const std::vector<CpuMask>& ranksOnHost) {
  CpuMask together = mine;
  int competing = 0;
  for (const CpuMask& other : ranksOnHost) {
    if (!other.overlaps(mine)) continue;
    ++competing;
    together.add(other);
  }
  return competing > together.count();
}

}  // namespace slimeccl
