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

std::vector<int> rankCpus(const LaunchOptions& options) {
  if (options.binding == Binding::None) return {};
  std::vector<int> cpus = allowedCpus();
  if (options.binding == Binding::Automatic && static_cast<size_t>(options.local_ranks) > kAutomaticRanksPerCpu * cpus.size())
    return {};
  return cpus;
}

}  // namespace slimeccl::run
