// Futex wait/wake on 32-bit words, valid across processes on shared mappings.
#pragma once

#include <atomic>
#include <cstdint>

namespace slimeccl {

// Sleeps while *word == expected, at most timeoutMs; spurious wake-ups are allowed.
void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs);
void futexWakeAll(std::atomic<uint32_t>* word);

}  // namespace slimeccl
