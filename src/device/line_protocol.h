// Small ops without the host: one kernel per op moves its bytes through the comm's landing zones
// (src/device/landing_zone.h) as flagged lines, 16 bytes that carry 8 bytes of data and the step's
// flag twice, so a receiver knows a line has landed from the line itself and no rank waits for, or
// meets, another on the host (docs/cuda.md, "Small ops by flagged lines"). CUDA-free: the queuing
// code that includes it is also built without CUDA.
//
// A message (one rank's bytes for one peer in one op) is cut into chunks of at most kLineStepBytes,
// dealt round the message's lanes (chunk c to lane c mod lanes, as its step c / lanes); each lane is
// a block of threads at both ends. A lane's steps to one peer go through kLineSlots slots of the
// peer's zone in turn; the receiver clears a slot's lines once it has read them and acknowledges
// the step in the sender's zone, and a sender reuses a slot once the step before in it is
// acknowledged. The first step of a message's lane 0 carries the op's signature, which the receiver
// compares with its own call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "include/slimeccl.h"

// The layout's arithmetic runs on the host and in the kernels alike.
#ifdef __CUDACC__
#define SLIMECCL_LINE_FN __host__ __device__ inline
#else
#define SLIMECCL_LINE_FN inline
#endif

namespace slimeccl {

constexpr int kLineMaxRanks = 8;
constexpr int kLineMaxLanes = 32;
constexpr int kLineSlots = 4;
constexpr int kLineThreads = 512;
constexpr int kLinesPerThread = 2;
constexpr size_t kLinesPerStep = static_cast<size_t>(kLineThreads) * kLinesPerThread;
constexpr size_t kLineStepBytes = kLinesPerStep * 8;  // data bytes of one step
// A step's area in a zone: two lines of signature, then the data lines.
constexpr size_t kLineStepAreaBytes = (2 + kLinesPerStep) * 16;

// Where a sender's steps land and where acknowledgements land, in a zone of `nranks` ranks.
SLIMECCL_LINE_FN size_t lineStepArea(int from, int lane, int slot) {
  return ((static_cast<size_t>(from) * kLineMaxLanes + lane) * kLineSlots + slot) * kLineStepAreaBytes;
}
SLIMECCL_LINE_FN size_t lineAck(int nranks, int to, int lane, int slot) {
  return lineStepArea(nranks, 0, 0) + ((static_cast<size_t>(to) * kLineMaxLanes + lane) * kLineSlots + slot) * 8;
}
SLIMECCL_LINE_FN size_t lineZoneBytes(int nranks) { return lineAck(nranks, nranks, 0, 0); }

// A message is spread over its lanes a share of kLineLaneShare bytes each while it has fewer than
// kLineMaxLanes of them, so that a small message's lines go out and come in over many blocks at once
// (one line per thread); past that its chunks grow to a whole step.
constexpr uint64_t kLineLaneShare = 2048;

// The lanes of a message of `bytes`: one per share, at least one, at most kLineMaxLanes.
SLIMECCL_LINE_FN int lineLanes(uint64_t bytes) {
  const uint64_t shares = (bytes + kLineLaneShare - 1) / kLineLaneShare;
  return shares == 0 ? 1 : shares >= kLineMaxLanes ? kLineMaxLanes : static_cast<int>(shares);
}
// The bytes of one chunk of such a message (a multiple of 16, at most a step's).
SLIMECCL_LINE_FN uint64_t lineChunkBytes(uint64_t bytes) {
  const int lanes = lineLanes(bytes);
  const uint64_t share = (bytes + lanes - 1) / lanes;
  const uint64_t chunk = (share + 15) / 16 * 16;
  return chunk < kLineLaneShare ? kLineLaneShare : chunk > kLineStepBytes ? kLineStepBytes : chunk;
}

// What a rank's call was, as the first step of each message carries it: the receiver compares it
// with its own (a Send's with the Recv's bytes, a collective's whole).
struct LineSignature {
  uint64_t count = 0;  // elements; a Send's and Recv's: bytes
  uint8_t coll = 0, type = 0, redOp = 0, spare = 0;
  int32_t root = 0;
};
static_assert(sizeof(LineSignature) == 16);

// Words the kernels keep in device memory, this rank's own (zeroed at setup).
struct LineState {
  uint64_t sentSteps[kLineMaxRanks][kLineMaxLanes];      // steps sent to each peer, by lane
  uint64_t receivedSteps[kLineMaxRanks][kLineMaxLanes];  // steps received from each peer, by lane
  // Blocks of kernels not captured in a graph that have finished (a count that wraps): a stream that
  // must follow the comm's last kernel waits until it reaches that kernel's last block.
  uint32_t doneBlocks;
  uint32_t failed;  // a block saw a mismatched call or was let go: the others stop too
  // The grid's meeting after a snapshot: arrivals, and the generation the last arrival moves on.
  uint32_t snapshotArrivals, snapshotGeneration;
};

// Words in pinned host memory. An op that goes well writes none: a thread that has waited long (some
// thousands of polls) reports so, and says when its wait ended, and the host lets every wait go.
struct LineProgress {
  uint64_t stuckId;         // the wait reported last (nonzero)
  uint64_t resolvedId;      // set to stuckId by that wait when it ends: equal, none is stuck
  LineSignature stuckCall;  // the call of the kernel that reported last
  uint32_t release;         // set by the host: every wait gives up and the kernels end
  uint32_t mismatch;        // set once the report below is filled
  int32_t mismatchPeer;
  LineSignature mine, theirs;  // the mismatched calls, this rank's and the peer's
};

// One message this rank sends or receives: its buffer (0 for a reduction's input from a peer, which
// goes straight into the reduction), its bytes and its peer. A send of a job that takes a snapshot
// reads its bytes from `snapshotAt` (device memory), where the kernel first copies them.
struct LineMessage {
  uint64_t buffer = 0;
  uint64_t snapshotAt = 0;
  uint64_t bytes = 0;
  int32_t peer = 0;
  // Its shape, worked out on the host (64-bit division costs a kernel dozens of instructions):
  // lineLanes(bytes), lineChunkBytes(bytes) and the count of chunks.
  int32_t lanes = 1;
  uint32_t chunkBytes = 0, chunks = 0;
  LineSignature signature;  // the call as the peer should see it, or as this rank expects it
};

constexpr int kLineMaxMessages = 32;
constexpr int kLineMaxUnits = 2 * kLineMaxRanks;

// A unit's blocks (one per lane) run together: an exchange sends its messages to one peer and
// receives its messages from that peer, step by step, a send before a receive; a reduction sends
// its messages and then reduces its inputs from every peer with this rank's, in rank order; a copy
// copies bytes within the GPU.
enum class LineUnitKind : uint8_t { Exchange = 0, Reduction = 1, Copy = 2 };

struct LineUnit {
  LineUnitKind kind = LineUnitKind::Exchange;
  uint8_t lanes = 1;
  uint8_t firstSend = 0, sends = 0;  // indexes into LineJob::messages
  uint8_t firstRecv = 0, recvs = 0;  // Reduction: the inputs from peers, in rank order
  uint16_t firstBlock = 0;
  // Copy: source, destination, bytes; Reduction: this rank's input and the result, bytes each.
  uint64_t src = 0, dst = 0, bytes = 0;
};

struct LineJob {
  uint64_t zones[kLineMaxRanks] = {};  // each rank's zone as this rank addresses it
  uint64_t state = 0;                  // LineState, device memory
  uint64_t progress = 0;               // LineProgress, pinned host memory as the GPU addresses it
  int32_t rank = 0, nranks = 0;
  // Not captured in a graph: the kernel's blocks count into LineState::doneBlocks, for which an op of
  // the comm on another stream waits (kernels of one comm must not overlap).
  int32_t eager = 0;
  LineSignature signature;  // for the host's sentence about a kernel that does not finish
  LineMessage messages[kLineMaxMessages];
  int32_t messageCount = 0;
  LineUnit units[kLineMaxUnits];
  int32_t unitCount = 0;
  int32_t blocks = 0;
  // Where some receive writes what some send reads (in place): every send's bytes are first copied
  // to its message's snapshotAt, and the grid meets before any step.
  int32_t snapshot = 0;
  // Reductions: avg's divisor (0: none); a PreMulSum's scalar, this rank's, by which the rank
  // multiplies its input before it sends or reduces it: at a device address read when the kernel
  // starts, or where that is 0, the value's bits.
  int32_t divisor = 0;
  int32_t premul = 0;
  uint64_t scalarPointer = 0;
  uint64_t scalarBits = 0;
};

// Loads the kernels on the current GPU, as loadSmCopyKernel does and why; false where they cannot be.
bool loadLineKernels(int device);

// Queues the job on `stream` (a cudaStream_t) of GPU `device`, whose kernels loadLineKernels loaded,
// as one kernel of job.blocks blocks; reductions take their type and op (avg as sum with the divisor;
// a PreMulSum says so in the job). The cudaError_t of the launch.
int launchLines(const LineJob& job, int device, slimecclDataType_t type, slimecclRedOp_t op, void* stream);

}  // namespace slimeccl
