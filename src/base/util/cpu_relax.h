// A hint to the CPU inside a busy-wait loop: it saves power and, when the wait ends, spares the
// pipeline the flush that a tight loop of loads would cost.
#pragma once

namespace slimeccl {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace slimeccl
