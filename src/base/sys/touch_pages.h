// Touches every page of a shared mapping once, as a write that changes nothing.
#pragma once

#include <cstddef>

namespace slimeccl {

// The first access of a process to each page of a mapping can cost microseconds (a page fault;
// under shadow paging, as on this project's VMs, an exit to the hypervisor besides): on a fresh
// 512 KiB shm FIFO that added 2 ms to its first few hundred messages. Paying it once, when the
// mapping is made, keeps the first ops as fast as the later ones. Each page gets an atomic add of
// zero, so a peer writing the same memory meanwhile loses nothing. `base` is page-aligned.
void touchPages(void* base, size_t bytes);

}  // namespace slimeccl
