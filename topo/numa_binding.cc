#include "topo/numa_binding.h"

#include <numa.h>
#include <numaif.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "src/base/error.h"

namespace slimeccl {
namespace {

slimecclResult_t checkNode(int node, const char* what) {
  if (numa_available() < 0) return fail(slimecclSystemError, "{}: libnuma reports no NUMA support here", what);
  if (node < 0 || node > numa_max_node())
    return fail(slimecclInvalidArgument, "{}: NUMA node {} does not exist (nodes 0 to {})", what, node,
                numa_max_node());
  return slimecclSuccess;
}

}  // namespace

slimecclResult_t bindThreadToNumaNode(int node) {
  SLIMECCL_CHECK(checkNode(node, "binding a thread"));
  if (numa_run_on_node(node) != 0)
    return fail(slimecclSystemError, "binding a thread to NUMA node {} failed: {}", node, strerror(errno));
  return slimecclSuccess;
}

slimecclResult_t preferNumaNode(void* addr, size_t bytes, int node) {
  SLIMECCL_CHECK(checkNode(node, "placing memory"));
  unsigned long maxNode = static_cast<unsigned long>(numa_max_node()) + 1;
  std::vector<unsigned long> mask((maxNode + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long)), 0);
  mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
  if (mbind(addr, bytes, MPOL_PREFERRED, mask.data(), maxNode + 1, 0) != 0)
    return fail(slimecclSystemError, "placing {} bytes at {} on NUMA node {} failed (mbind): {}", bytes, addr, node,
                strerror(errno));
  return slimecclSuccess;
}

slimecclResult_t allocOnNumaNode(size_t bytes, int node, void** out) {
  SLIMECCL_CHECK(checkNode(node, "allocating memory"));
  *out = numa_alloc_onnode(bytes, node);
  if (*out == nullptr) return fail(slimecclSystemError, "allocating {} bytes on NUMA node {} failed", bytes, node);
  return slimecclSuccess;
}

void freeOnNumaNode(void* addr, size_t bytes) {
  if (addr != nullptr) numa_free(addr, bytes);
}

}  // namespace slimeccl
