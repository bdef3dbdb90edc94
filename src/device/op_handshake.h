// The handshakes of a GPU-to-GPU op: it sets each peer's flag in `set`, then waits for each of this
// rank's flags in `wait` and clears it. The copy-engine form queues one as stream memory
// operations, the kernels run it themselves (src/device/kernel_handshake.cuh); both leave the
// flags alike, so ranks may take either. CUDA-free.
#pragma once

#include <cstdint>
#include <vector>

#include "src/device/gpu_peers.h"
#include "src/device/sm_copy.h"

namespace slimeccl {

struct Handshake {
  std::vector<uint64_t> set, wait;
};

// Every peer sets `kind` on every other; each rank's stream waits for all of them, then clears them.
Handshake exchangeOf(const GpuPeers& peers, FlagKind kind, int rank, int nranks);
// Whether a kernel can carry it (kSmCopyMaxFlags each way).
bool fitsKernel(const Handshake& h);
// As a kernel's job carries it; it must fit.
SmCopyHandshake forKernel(const Handshake& h);

}  // namespace slimeccl
