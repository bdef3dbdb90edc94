// An op lowered for execution: its schedule's steps cut into chunk-sized net operations, grouped
// in sessions (all the traffic of this op with one peer in one direction), plus local steps.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "src/exec/block_watch.h"
#include "src/exec/staging_buffer.h"
#include "src/op.h"
#include "src/link/link.h"
#include "src/link/net_op.h"

namespace slimeccl {

// What both ends of a session compare before trusting each other's bytes.
struct OpDesc {
  uint32_t magic;
  uint8_t isP2P;
  uint8_t coll;
  uint8_t type;
  uint8_t redOp;
  int32_t root;
  int32_t rank;  // the rank that wrote this descriptor
  uint64_t seq;
  uint64_t count;
  uint64_t bytes;  // bytes of the session (sender to receiver)
  uint64_t reserved[3];
};
static_assert(sizeof(OpDesc) == 64);
constexpr uint32_t kOpDescMagic = 0x534c4f44;  // "SLOD"
// A session whose first chunk is at most this size carries it inside the header message.
constexpr size_t kInlineBytes = 8192;
// A Send/Recv of at most kInlineBytes is eager: the header carries all of it, the receiver sends
// no descriptor back, and the Send completes once its message is handed over (as MPI's eager
// sends do). The receiver still compares the sender's descriptor with its own call.

// Session progress is written by the executor's thread alone and read by the flight recorder:
// relaxed accesses suffice, and spare a locked instruction per chunk.
inline void addRelaxed(std::atomic<size_t>& counter, size_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct Session {
  int peer;
  bool sending;
  Link* link = nullptr;
  OpDesc local{};
  OpDesc remote{};
  std::atomic<bool> remoteSeen{false};  // atomics: the flight recorder reads them while running
  std::unique_ptr<char[]> staging;      // header message: descriptor, then the inline chunk if any
  // The sender's descriptor goes in its short form (src/exec/session_header.h): an eager Send
  // whose header message carries all of it.
  bool shortHeader = false;
  size_t stagingBytes = 0;
  size_t bytesTotal = 0;
  std::atomic<size_t> bytesDone{0};
  // The first chunk may travel inside the header message; this op stands for it.
  NetOp* inlineChunk = nullptr;
  NetOp* header = nullptr;
  std::vector<std::unique_ptr<NetOp>> ops;  // in lane order: control (unless eager), then data
  std::atomic<size_t> opsLeft{0};
};

// A local step (copy, reduce, scale), run whole once its dependency is complete.
struct LocalTask {
  int step;
  bool done = false;
};

// How far an op carried by the comm's shared slots has come (src/exec/mailbox_run.h).
struct MailboxProgress {
  // Atomics: the flight recorder reads them while the op runs.
  std::atomic<uint64_t> seq{0};  // the op's number in the slots; 0 until it starts
  std::atomic<bool> published{false};
  bool everyoneSeen = false;
  std::vector<int> sends, receives;  // step indices
  std::vector<uint8_t> received;     // per entry of receives
  std::vector<uint8_t> seen;         // per peer: its slot holds this op
  // Per peer: the cache lines past its slot's head that its bytes for this rank take, counted as if
  // they start in the head (as a uniform slot's do; at most kMailboxWarmedLines), asked for while
  // the head is polled so that they come over with it.
  std::vector<uint8_t> linesFrom;
  int unseen = 0;

  void rearm();
};

struct OpPlan {
  OpRecord op;
  int nranks = 1;
  Schedule schedule;
  StagingBuffer scratch;               // BufferId::Scratch
  std::vector<StagingBuffer> staging;  // per RecvReduce step: where incoming chunks land
  std::vector<size_t> stepDone;        // completed chunks per step, in order
  std::vector<size_t> stepMessages;    // chunks per step (1 for local steps)
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<LocalTask> locals;
  size_t remaining = 0;                      // net operations and local steps not yet complete
  size_t total = 0;                          // net operations and local steps of the whole op
  std::unique_ptr<BlockWatch> blockWatch;    // when the op has a block listener
  std::unique_ptr<MailboxProgress> mailbox;  // when the shared slots carry the op (no sessions then)
  bool streamingStores = false;              // the op writes more than the caches hold (SLIMECCL_STREAM_COPY_BYTES)
  const char* algorithm = "";                // a collective's algorithm (algoName), for slimecclCommGetLastOpRoute

  char* address(const BufferRange& range);
  bool dependencyMet(int step, size_t chunk) const;
};

// Cuts the op's schedule into sessions, net operations (not yet bound to links) and local tasks.
void lowerSchedule(OpPlan* plan, int rank, int nranks, size_t chunkBytes);
// Makes a lowered plan of an earlier, identical call ready to run `op` (its sequence number
// and trace id differ): descriptors refilled, progress counters back to zero.
void rearmPlan(OpPlan* plan, const OpRecord& op, int rank);
// A received chunk is in place (or in staging): reduce it if its step asks for that, and tell the
// block watch what it wrote.
void finishReceivedChunk(OpPlan* plan, NetOp* op);
// Whether a received chunk lands in the user's receive buffer of an op too large for the caches,
// where the module should copy it with streaming stores.
bool landsPastTheCaches(const OpPlan& plan, const NetOp& op);
// Runs the local steps whose turn has come; returns true if any ran.
bool runLocalSteps(OpPlan* plan);
// "peer 2 (received 0 of 16 bytes, nothing from the peer on this op yet); ..." for unfinished sessions.
std::string describeWaits(const OpPlan& plan);

// Compares a peer's descriptor with ours; InvalidUsage with a sentence naming both calls.
slimecclResult_t checkPeerDesc(const OpPlan& plan, const Session& session);
// The same for descriptors from elsewhere (sending: this rank sends to the peer).
slimecclResult_t checkPeerDesc(const OpRecord& op, const OpDesc& mine, const OpDesc& theirs, int peer, bool sending);

void fillDesc(const OpRecord& op, int rank, uint64_t sessionBytes, OpDesc* desc);

}  // namespace slimeccl
