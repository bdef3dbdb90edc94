// In-place ops GPU to GPU. Where a call's Recv (or an in-place AlltoAll) writes bytes that one of its
// Sends reads, a peer could land its bytes before this rank has sent its own; so the Send reads a
// snapshot of them instead, copied on the caller's stream before the rank tells any peer it is
// ready. The snapshot lives in stream-ordered memory of the comm's pool (while a graph is captured
// the graph owns it) and is freed on the stream once the op's copies are queued. CUDA-free.
#pragma once

#include <cstddef>
#include <string>

#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl {

// A pool of device memory on `device` whose freed memory stays for reuse up to a bound; null with a
// sentence in *why where one cannot be made.
void* makeSnapshotPool(int device, std::string* why);
void destroySnapshotPool(void* pool);

// Queues on `stream` (a cudaStream_t) an allocation of `bytes` from `pool`: *out, where the
// snapshot goes. Errors name `op`.
slimecclResult_t allocateSnapshot(void* pool, size_t bytes, void* stream, const OpRecord& op, char** out);
// Queues the copy of `bytes` at `src` into `snapshot` on `stream`, where no kernel of the op copies
// it (the copy kernel takes its snapshots before its first handshake, src/device/sm_copy.h).
slimecclResult_t copySnapshot(char* snapshot, const void* src, size_t bytes, void* stream, const OpRecord& op);
// Queues the snapshot's release on `stream`, after the work that reads it.
slimecclResult_t releaseSnapshot(char* snapshot, void* stream, const OpRecord& op);

}  // namespace slimeccl
