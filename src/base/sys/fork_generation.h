// How many forks lie between the process that first used the library and this one. What a process
// makes (a communicator) records it, so that a child forked later, which has the parent's memory
// but none of its threads and shares its sockets and shared memory, can refuse to use it.
#pragma once

#include <cstdint>

namespace slimeccl {

// Counting starts with the first call (which registers a fork handler): call it before anything
// that records it can be forked.
uint64_t forkGeneration();

}  // namespace slimeccl
