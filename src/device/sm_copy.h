// Ops up to a few MiB in one kernel: the flag handshakes and the copies of an op run as one launch
// of up to a few dozen blocks of threads, which costs the host one call and the GPU a few
// microseconds beside the copies, where copy engines cost several calls and a fixed start each.
// CUDA-free: the queuing code that includes it is also built without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>

namespace slimeccl {

constexpr int kSmCopyMaxCopies = 8;
constexpr int kSmCopyMaxFlags = 8;
constexpr int kSmCopyCounterWords = 2;

// One handshake: set each of `set` (peers' flags) to 1, then wait until each of `wait` (this
// rank's flags) is 1 and set it back to 0, as the stream memory operations of the copy-engine
// form do (device addresses of the pinned flags).
struct SmCopyHandshake {
  uint64_t set[kSmCopyMaxFlags];
  uint64_t wait[kSmCopyMaxFlags];
  int sets = 0;
  int waits = 0;
};

struct SmCopy {
  uint64_t dst, src, bytes;
};

// An op: its snapshots (in-place sends' bytes copied aside within the GPU, src/device/send_snapshot.h),
// the first handshake, the copies, then the second handshake. `counters`: kSmCopyCounterWords
// zeroed 32-bit words of device memory, owned by the comm, on which the kernel's blocks meet (each
// launch leaves them zero again).
struct SmCopyJob {
  SmCopyHandshake before, after;
  SmCopy copies[kSmCopyMaxCopies];
  int copyCount = 0;
  SmCopy snapshots[kSmCopyMaxCopies];
  int snapshotCount = 0;
  uint64_t counters = 0;
};

// Loads the kernel on the current GPU, before any op is queued (slimecclStreamCreateFromCuda):
// loaded lazily at its first launch instead, it could wait for the GPU to idle while a stream waits
// for host work that needs the CUDA context (a deadlock), or hold up the call. Where it cannot be
// loaded (a GPU older than the code built), ops go by copy engine.
void loadSmCopyKernel(int device);
bool smCopyKernelLoaded(int device);

// Queues the job as one kernel of at most `maxBlocks` blocks of threads (each on an SM of its own
// while it runs) on `stream` (a cudaStream_t); the cudaError_t of the launch. *blocksUsed: the
// blocks it launched with.
int launchSmCopy(const SmCopyJob& job, int maxBlocks, void* stream, int* blocksUsed);

}  // namespace slimeccl
