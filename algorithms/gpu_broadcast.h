// Broadcast on 3 or more GPUs by copy engines (docs/algorithms.md, "GPU Broadcast"): the root
// scatters the buffer over the other ranks in rounds, and each passes the pieces it receives on to
// every other non-root rank as they land. The root's links then carry the buffer once instead of
// once per peer, and the passing on of one round overlaps the root's sending of the next.
#pragma once

#include <cstddef>

namespace slimeccl {

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
