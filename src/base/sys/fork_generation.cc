#include "src/base/sys/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace slimeccl {
namespace {

std::atomic<uint64_t> generation{0};

void countFork() { generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint64_t forkGeneration() {
  static const bool counting = pthread_atfork(nullptr, nullptr, countFork) == 0;
  (void)counting;
  return generation.load(std::memory_order_relaxed);
}

}  // namespace slimeccl
