#include "cpu_binding.h"

#include <sched.h>

namespace slimeccl::run {

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::vector<std::vector<int>> rankCpuSets(const LaunchOptions& options) {
  if (options.binding == Binding::None) return {};
  const std::vector<int> cpus = allowedCpus();
  const size_t ranks = static_cast<size_t>(options.localRanks);
  if (cpus.empty() || (options.binding == Binding::Automatic && ranks > kAutomaticRanksPerCpu * cpus.size())) return {};
  std::vector<std::vector<int>> sets(ranks);
  // Fewer ranks than CPUs: each its own block of neighbouring CPUs (of the allowed ones, all of
  // them shared out), so that the threads a rank starts beside its main one (its GPU's driver
  // threads, watchers, progress) do not take turns with it on one CPU. Else one CPU each in turn.
  const size_t n = cpus.size();
  for (size_t rank = 0; rank < ranks; ++rank) {
    if (options.binding == Binding::Core || ranks >= n) {
      sets[rank].push_back(cpus[rank % n]);
      continue;
    }
    for (size_t k = rank * n / ranks; k < (rank + 1) * n / ranks; ++k) sets[rank].push_back(cpus[k]);
  }
  return sets;
}

}  // namespace slimeccl::run
