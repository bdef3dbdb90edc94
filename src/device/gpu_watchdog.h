// One thread per process that watches the GPU-to-GPU ops in flight (src/device/gpu_peers.h), so
// that a peer that dies or never comes cannot leave a CUDA stream waiting for ever: it starts with
// the first communicator that sets up the path and looks every millisecond while an op is on a GPU,
// every 20 ms while none is.
#pragma once

namespace slimeccl {

class GpuPeers;

void watchGpuPeers(GpuPeers* peers);
// Returns once the watchdog no longer touches `peers`.
void unwatchGpuPeers(GpuPeers* peers);
// `peers` was retired with ops running: the watchdog frees it once they have ended.
void orphanGpuPeers(GpuPeers* peers);

}  // namespace slimeccl
