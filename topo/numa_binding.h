// Placing memory and threads on a NUMA node with libnuma: staging buffers and shared-memory FIFOs
// on the rank's home node (topo/numa_choice.h), progress threads on its CPUs.
#pragma once

#include <cstddef>

#include "include/slimeccl.h"

namespace slimeccl {

// Runs the calling thread on the CPUs of the node.
slimecclResult_t bindThreadToNumaNode(int node);
// Asks that the pages of [addr, addr + bytes) come from the node (preferred, so allocation still
// succeeds when the node is full). addr must be page aligned; call before the pages are touched.
// Works for shared mappings too (memfd, /dev/shm), whose pages then follow the policy.
slimecclResult_t preferNumaNode(void* addr, size_t bytes, int node);
// Memory from the node; release with freeOnNumaNode.
slimecclResult_t allocOnNumaNode(size_t bytes, int node, void** out);
void freeOnNumaNode(void* addr, size_t bytes);

}  // namespace slimeccl
