// libnuma placement of threads and memory on this machine's nodes.
#include <gtest/gtest.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <sys/mman.h>

#include <cstring>
#include <thread>

#include "src/base/error.h"
#include "src/exec/staging_buffer.h"
#include "topo/numa_binding.h"

namespace slimeccl {
namespace {

class NumaBinding : public ::testing::Test {
 protected:
  void SetUp() override {
    if (numa_available() < 0) GTEST_SKIP() << "libnuma reports no NUMA support on this machine";
  }
};

TEST_F(NumaBinding, ThreadRunsOnlyOnTheNodesCpus) {
  int node = numa_max_node();
  // A thread of its own, so the test runner's binding stays as it was.
  std::thread([node] {
    ASSERT_EQ(bindThreadToNumaNode(node), slimecclSuccess) << threadError();
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    bitmask* nodeCpus = numa_allocate_cpumask();
    ASSERT_EQ(numa_node_to_cpus(node, nodeCpus), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < static_cast<int>(nodeCpus->size); ++cpu)
      if (CPU_ISSET(cpu, &set)) {
        EXPECT_TRUE(numa_bitmask_isbitset(nodeCpus, cpu)) << "cpu " << cpu;
      }
    numa_free_cpumask(nodeCpus);
  }).join();
}

TEST_F(NumaBinding, MissingNodeIsNamed) {
  EXPECT_EQ(bindThreadToNumaNode(4095), slimecclInvalidArgument);
  EXPECT_NE(threadError().find("NUMA node 4095 does not exist"), std::string::npos) << threadError();
  void* p = nullptr;
  EXPECT_EQ(allocOnNumaNode(4096, -1, &p), slimecclInvalidArgument);
}

TEST_F(NumaBinding, PreferredNodeHoldsTheTouchedPages) {
  const size_t bytes = 1 << 20;
  void* area = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(area, MAP_FAILED);
  ASSERT_EQ(preferNumaNode(area, bytes, 0), slimecclSuccess) << threadError();
  memset(area, 1, bytes);
  int node = -1;
  ASSERT_EQ(get_mempolicy(&node, nullptr, 0, area, MPOL_F_NODE | MPOL_F_ADDR), 0);
  EXPECT_EQ(node, 0);
  munmap(area, bytes);
}

TEST_F(NumaBinding, AllocationOnANodeIsUsable) {
  void* p = nullptr;
  ASSERT_EQ(allocOnNumaNode(1 << 16, 0, &p), slimecclSuccess) << threadError();
  memset(p, 7, 1 << 16);
  int node = -1;
  ASSERT_EQ(get_mempolicy(&node, nullptr, 0, p, MPOL_F_NODE | MPOL_F_ADDR), 0);
  EXPECT_EQ(node, 0);
  freeOnNumaNode(p, 1 << 16);
}

// An op's staging memory: writable, and on the node when asked for and large.
TEST_F(NumaBinding, StagingBufferIsPlaced) {
  const size_t bytes = 1 << 20;
  for (int node : {-1, 0}) {
    StagingBuffer buffer(bytes, node);
    ASSERT_NE(buffer.data(), nullptr);
    EXPECT_EQ(buffer.size(), bytes);
    EXPECT_EQ(buffer.onNode(), node == 0);
    memset(buffer.data(), 3, bytes);
    if (node < 0) continue;
    int where = -1;
    ASSERT_EQ(get_mempolicy(&where, nullptr, 0, buffer.data(), MPOL_F_NODE | MPOL_F_ADDR), 0);
    EXPECT_EQ(where, 0);
  }
  StagingBuffer small(100, 0);
  EXPECT_FALSE(small.onNode()) << "a small buffer is not worth a mapping of its own";
  StagingBuffer moved = std::move(small);
  EXPECT_EQ(moved.size(), 100u);
  EXPECT_EQ(small.data(), nullptr);
}

}  // namespace
}  // namespace slimeccl
