// Broadcast GPU to GPU on one host (docs/algorithms.md, "GPU Broadcast"):
//   root          the root writes the whole buffer into every peer's (one kernel, or copy engines).
//   scatter_ag    3 or more GPUs, by copy engines: the root scatters the buffer over the other
//                 ranks in rounds, and each passes the pieces it receives on to every other non-root
//                 rank as they land; the passing on of one round overlaps the root's next.
//   scatter_pull  3 or more GPUs, one kernel per rank: each non-root rank reads its share of the
//                 root's buffer and writes it into every rank's output, all in one pass with no
//                 handshake between the two halves (the root's buffer is whole from the start).
// In both scatters the root's links carry the buffer once instead of once per peer.
#pragma once

#include <cstddef>

namespace slimeccl {

enum class GpuBroadcastAlgo : unsigned char { Root, Relay, Pull };
constexpr GpuBroadcastAlgo kGpuBroadcastAlgos[] = {GpuBroadcastAlgo::Root, GpuBroadcastAlgo::Relay,
                                                   GpuBroadcastAlgo::Pull};

// "root", "scatter_ag", "scatter_pull"
const char* gpuBroadcastAlgoName(GpuBroadcastAlgo algo);
bool parseGpuBroadcastAlgo(const char* name, GpuBroadcastAlgo* out);
// Whether `algo` serves a Broadcast on `nranks` GPUs (the scatters need a non-root rank to pass on
// to another).
bool gpuBroadcastAlgoFits(GpuBroadcastAlgo algo, int nranks);

// A span of the buffer, in elements.
struct PullShare {
  size_t offset, count;
};

// scatter_pull: the share that the non-root rank `holder` (0 to nranks - 2: rank
// (root + 1 + holder) % nranks) reads from the root and writes into every rank, in 4 KiB multiples
// but the last (a share starting mid-line would cost every warp's reads a line more). The holders'
// shares cover the buffer once.
PullShare pullShare(size_t count, size_t typeBytes, int nranks, int holder);

// At most this many rounds (each has a flag of its own per rank: src/device/gpu_peers.h).
constexpr int kRelayMaxRounds = 6;

struct RelayPiece {
  size_t offset, bytes;  // within the buffer; bytes 0: nothing in it, its flag is still set
};

// How many rounds a Broadcast of `bytes` on `nranks` ranks takes: pieces of at least 8 MiB where
// there is room, at most kRelayMaxRounds.
int relayRounds(size_t bytes, int nranks);
// The piece the root sends in `round` to the non-root rank `holder` (0 to nranks - 2: rank
// (root + 1 + holder) % nranks), which that rank then passes on. The pieces of all rounds and
// holders cover the buffer once, in 4 KiB multiples but the last.
RelayPiece relayPiece(size_t bytes, int nranks, int rounds, int round, int holder);

}  // namespace slimeccl
