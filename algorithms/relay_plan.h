// Device buffers between GPUs that cannot reach each other (docs/algorithms.md, "Host relays"). Each
// rank owns a relay in host memory that every GPU of the host has pinned: a to-peer lane for each
// peer (bytes only that peer reads: AlltoAll blocks, messages, a reduction's contributions to the
// peer's part) and one shared lane that every peer reads (AllGather and Broadcast blocks, a
// reduction's results), each of kRelaySlots slots. A writer copies a chunk of its buffer into a
// slot and tells the lane's readers; each reader copies the chunk out (into its output, or into its
// landing area on its GPU to reduce it) and tells the writer the slot is free again.
//
// A plan lists one rank's steps for one op in the order they are queued, each on one of the op's
// streams. The streams run beside each other, each in its own order; an Await waits for the latest
// Signal of its event queued before it. Chunk c of a lane goes in slot c mod kRelaySlots: a writer
// waits for a slot to be free before it reuses it, and at the end of the op for every slot it
// used, so that every flag is clear when the op ends and a captured graph replays the same writes
// and waits. Steps are listed by chunk (a group's messages: by each chunk's number on its lane, Puts
// running ahead of Takes), and within a chunk the puts before the takes: every wait is
// for a step earlier in that order on another rank (a Take at chunk c for a Put at c, a slot's
// reuse for a Take at an earlier chunk), so no ranks wait for each other in a cycle, even where
// streams share one hardware queue and run in the order queued. Where no
// lane carries more than one chunk, the whole plan is one stream: its puts, which wait for nothing,
// then its takes, then the waits for its slots to be freed.
// The plans are pure functions, checked on host memory by algorithms/relay_simulator.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/base/util/op_kinds.h"

namespace slimeccl {

constexpr int kRelaySlots = 4;

enum class RelayLane : uint8_t { ToPeer = 0, Shared = 1 };
constexpr int kRelayLanes = 2;

// The buffers a span names: the rank's landing area on its GPU, then a collective's send and receive
// buffers, or a group's messages in call order.
constexpr uint32_t kRelayLanding = 0;
constexpr uint32_t kRelaySend = 1;
constexpr uint32_t kRelayRecv = 2;
constexpr uint32_t kRelayFirstMessage = 1;

struct RelaySpan {
  uint32_t buffer = kRelayLanding;
  size_t offset = 0;  // bytes from the buffer's start
};

// A reduction's source and the rank whose input it holds (its PreMulSum scalar multiplies it).
struct RelaySource {
  RelaySpan span;
  int rank = 0;
};

enum class RelayStepKind : uint8_t {
  Put,        // copy `bytes` from `at` into slot `slot` of this rank's lane, then tell `peers`
  AwaitFree,  // wait until each of `peers` has freed slot `slot` of this rank's lane
  Take,       // wait for writer peers[0]'s chunk in slot `slot` of its lane, copy it to `at`, free it
  Reduce,     // reduce `count` elements of each source in order into `at`
  Copy,       // copy `bytes` from `from` to `at`, within the rank's GPU
  Signal,     // mark this point of the stream for Awaits of `event`
  Await,      // wait until the stream of the latest Signal of `event` queued before has reached it
};

struct RelayStep {
  RelayStepKind kind = RelayStepKind::Put;
  int stream = 0;
  RelayLane lane = RelayLane::ToPeer;  // a to-peer lane of this rank's is read by peers[0] (Put, AwaitFree)
  int slot = 0;
  std::vector<int> peers;            // Put: the readers told; AwaitFree: the readers waited for; Take: the writer
  RelaySpan at;                      // Put: the source; Take, Copy, Reduce: the destination
  RelaySpan from;                    // Copy: the source
  size_t bytes = 0;                  // Put, Take, Copy
  size_t count = 0;                  // Reduce: elements
  std::vector<RelaySource> sources;  // Reduce
  int event = 0;                     // Signal, Await
};

struct RelayMessage {
  bool send = false;
  int peer = 0;
  size_t bytes = 0;
};

// The chunks each of a rank's lanes has carried so far, alike at both ends of every lane: the next
// goes in slot count mod kRelaySlots. Every op leaves each slot free, but ends that split a lane's
// traffic into ops differently (two Sends to a peer, received in one group) still take each chunk
// from the slot it was put in.
struct RelayLaneCounts {
  std::vector<uint64_t> toPeerPuts, toPeerTakes, sharedTakes;  // by peer: its lane from this rank, and to it
  uint64_t sharedPuts = 0;
};

struct RelayRequest {
  Coll coll = Coll::AllGather;  // Send for a group's messages (`messages`, Sends and Recvs alike)
  int nranks = 1, rank = 0, root = 0;
  size_t count = 0;  // the call's count argument (AllGather, ReduceScatter, AlltoAll: per rank)
  size_t typeBytes = 1;
  bool inPlace = false;  // the call's own form (AlltoAll: sendbuff == recvbuff)
  size_t slotBytes = 0;  // a multiple of 16
  std::vector<RelayMessage> messages;
  RelayLaneCounts lanes;  // before the op; empty: none yet
};

struct RelayPlan {
  int streams = 0;
  std::vector<RelayStep> steps;
  RelayLaneCounts lanes;  // after the op
};

// The slot size where none is set: 4 MiB while every rank's relay together stays within 128 MiB,
// less on more ranks, at least 1 MiB (on one H200 shared by two processes, 4 MiB slots moved a
// 256 MiB AllGather 1.2x as fast as 1 MiB slots and 2.3x as fast as 256 KiB; docs/performance.md).
size_t relaySlotBytesFor(int nranks);

// The chunk an op cuts a lane of `laneBytes` into: a quarter of it in whole pages, so that its copies
// in and out overlap over the slots, but at least 256 KiB (a copy's start then costs little beside
// its bytes) and at most a slot. Every rank computes it alike from the call (a message: from its
// size). A lane of one chunk puts the whole op on one stream (RelayPlan::streams 1).
size_t relayChunkBytes(size_t laneBytes, size_t slotBytes);

// One rank's plan for the request.
RelayPlan planRelay(const RelayRequest& request);

// A rank's relay: a lane per rank (its own index holds the shared lane), kRelaySlots slots each.
size_t relayBytes(int nranks, size_t slotBytes);
// Where slot `slot` of `writer`'s lane that `reader` reads lies, from the start of the writer's relay.
size_t relaySlotOffset(RelayLane lane, int writer, int reader, int slot, size_t slotBytes);
// A rank's landing area: a slot's room for each peer and slot.
size_t relayLandingBytes(int nranks, size_t slotBytes);

}  // namespace slimeccl
