#include "src/device/gpu_direct.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>

#include "algorithms/gpu_tuning.h"
#include "src/comm.h"
#include "src/device/broadcast_pull.h"
#include "src/device/broadcast_relay.h"
#include "src/device/copy_queue.h"
#include "src/device/gpu.h"
#include "src/device/gpu_broadcasts.h"
#include "src/device/gpu_peers.h"
#include "src/device/gpu_reductions.h"
#include "src/device/line_ops.h"
#include "src/device/op_handshake.h"
#include "src/device/overlapped_allgather.h"
#include "src/device/relay_ops.h"
#include "src/device/send_snapshot.h"
#include "src/device/sm_copy.h"
#include "src/device/stream_memops.h"
#include "src/base/error.h"
#include "src/stream.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

slimecclResult_t setUpGpuDirectAtInit(slimecclComm_t comm, int device) {
  comm->device = device;
  // Its ranks share one process and so its settings: where one opts out, all do.
  comm->gpuPeersTried = true;
  if (!comm->params.gpuDirect || !comm->topology.singleHost() || !gpuPresent()) return slimecclSuccess;
  return GpuPeers::setup(comm, device, &comm->gpuPeers);
}

slimecclResult_t setUpNamedGpus(slimecclComm_t comm) {
  bool named = false;
  for (const RankInfo& info : comm->peers) named = named || info.namedGpu != 0;
  if (!named || !comm->topology.singleHost()) return slimecclSuccess;
  comm->gpuPeersTried = true;
  return GpuPeers::setup(comm, comm->device, &comm->gpuPeers);
}

#ifdef SLIMECCL_HAVE_CUDA

namespace {

// The comm's GPU peers, set up by its first op on a CUDA-ordered stream (alike on every rank).
slimecclResult_t peersFor(slimecclComm* comm, const CudaStreamBinding& binding, GpuPeers** out) {
  *out = nullptr;
  // Every rank sets up alike, even one that opted out: it tells the others so.
  if (!comm->topology.singleHost() || !gpuPresent()) return slimecclSuccess;
  if (!comm->gpuPeersTried) {
    comm->gpuPeersTried = true;
    SLIMECCL_CHECK(GpuPeers::setup(comm, comm->device >= 0 ? comm->device : binding.device(), &comm->gpuPeers));
  }
  *out = comm->gpuPeers.get();
  return slimecclSuccess;
}

void describePost(const PostContents& post, OpRecord* as) {
  as->coll = static_cast<Coll>(post.coll);
  as->count = post.count;
  as->type = static_cast<slimecclDataType_t>(post.type);
  as->redOp = static_cast<slimecclRedOp_t>(post.redOp);
  as->root = post.root;
}

void fillPost(PostContents* post, const OpRecord& op, bool onGpu) {
  post->count = op.count;
  post->bytes = op.bytes();
  post->root = op.root;
  post->coll = static_cast<uint8_t>(op.coll);
  post->type = static_cast<uint8_t>(op.type);
  post->redOp = op.premul.on ? kPreMulSumPost : static_cast<uint8_t>(op.redOp);
  post->onGpu = onGpu ? 1 : 0;
}

// Whether an op of `opBytes` (an AllGather's output, an AlltoAll's send buffer, a Broadcast's
// buffer, the largest message of a round) goes by one kernel.
bool goesBySms(const GpuPeers& peers, const OpRecord& op, size_t opBytes, size_t copies, const Handshake& before,
               const Handshake& after) {
  const size_t limit = op.comm->params.smCopyBytes.value_or(copyKernelMaxBytes(op.coll, op.comm->nranks));
  return limit != 0 && opBytes <= limit && copies <= kSmCopyMaxCopies && fitsKernel(before) && fitsKernel(after) &&
         peers.smCopyUsable();
}

SmCopy forKernel(const Copy& c) {
  return SmCopy{reinterpret_cast<uint64_t>(c.dst), reinterpret_cast<uint64_t>(c.src), c.bytes};
}

// The op's snapshots, handshakes and copies as one kernel; `ops` is how many ops of the comm it
// carries.
slimecclResult_t queueBySms(const GpuPeers& peers, const OpRecord& op, cudaStream_t stream,
                            const std::vector<Copy>& snapshots, const std::vector<Copy>& copies,
                            const Handshake& before, const Handshake& after, size_t ops) {
  SmCopyJob job;
  job.before = forKernel(before);
  job.after = forKernel(after);
  job.counters = peers.smCopyCounters();
  for (const Copy& c : copies) job.copies[job.copyCount++] = forKernel(c);
  for (const Copy& c : snapshots) job.snapshots[job.snapshotCount++] = forKernel(c);
  int blocks = 0;
  const int maxBlocks = std::min(op.comm->params.smCopyBlocks, op.comm->params.maxCtas.value_or(kMaxSmCopyBlocks));
  OP_CUDA_CHECK(static_cast<cudaError_t>(launchSmCopy(job, maxBlocks, stream, &blocks)), "launching its copy kernel");
  noteGrid(op.comm, blocks);
  op.comm->opsBySms.fetch_add(ops, std::memory_order_relaxed);
  return slimecclSuccess;
}

// One collective, GPU to GPU, reading this rank's bytes at `send`: its send buffer, or the snapshot
// that `snapshots` (none or one) fills first. Its local copy (out of place) starts at once on side
// stream 0; once every peer's stream has reached the op, each rank copies its blocks into the peers'
// buffers; once every peer's copies into this rank have landed, the stream goes on.
slimecclResult_t queueCollectiveFrom(GpuPeers& peers, const OpRecord& op, const char* send,
                                     const std::vector<Copy>& snapshots, cudaStream_t stream,
                                     const std::vector<char*>& peerRecv, bool capturing) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank;
  const size_t b = op.bytes();
  char* recv = static_cast<char*>(op.recvbuff);
  std::vector<Copy> local, remote;
  switch (op.coll) {
    case Coll::AllGather: {
      const char* mine = isInPlace(op) ? recv + me * b : send;
      if (!isInPlace(op)) local.push_back({recv + me * b, send, b});
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        remote.push_back({peerRecv[p] + me * b, mine, b});
      }
      break;
    }
    case Coll::Broadcast:
      if (me != op.root) break;
      if (!isInPlace(op)) local.push_back({recv, send, b});
      for (int k = 1; k < n; ++k) remote.push_back({peerRecv[(me + k) % n], send, b});
      break;
    case Coll::AlltoAll:
      if (op.sendbuff != op.recvbuff) local.push_back({recv + me * b, send + me * b, b});
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        remote.push_back({peerRecv[p] + me * b, send + p * b, b});
      }
      break;
    default: return fail(slimecclInternalError, "rank {}: {} has no GPU-to-GPU form", me, describeOp(op));
  }
  const Handshake arrivedAll = exchangeOf(peers, FlagKind::CollArrived, me, n);
  const Handshake landedAll = exchangeOf(peers, FlagKind::CollLanded, me, n);
  const size_t opBytes = op.coll == Coll::Broadcast ? b : b * n;
  if (goesBySms(peers, op, opBytes, local.size() + remote.size(), arrivedAll, landedAll)) {
    std::vector<Copy> copies = local;
    copies.insert(copies.end(), remote.begin(), remote.end());
    return queueBySms(peers, op, stream, snapshots, copies, arrivedAll, landedAll, 1);
  }
  for (const Copy& c : snapshots) SLIMECCL_CHECK(copySnapshot(c.dst, c.src, c.bytes, stream, op));
  // The local copy runs on side stream 0 from the start, beside the flag waits and the copies to
  // peers: on the caller's stream it would add its time to the op's.
  cudaEvent_t localDone = static_cast<cudaEvent_t>(peers.joinEvent(0));
  if (!local.empty()) {
    cudaStream_t side = static_cast<cudaStream_t>(peers.side(0));
    OP_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(peers.forkEvent()), stream), "forking the local copy");
    OP_CUDA_CHECK(cudaStreamWaitEvent(side, static_cast<cudaEvent_t>(peers.forkEvent()), 0), "forking the local copy");
    SLIMECCL_CHECK(queueCopiesOn(op, side, local, true, capturing));
    OP_CUDA_CHECK(cudaEventRecord(localDone, side), "joining the local copy");
  }
  MemOpBatch arrived = asBatch(arrivedAll);
  SLIMECCL_CHECK(queueFlags(arrived, op, stream));
  // Side stream 0 holds the local copy: the peers' copies beside the first use the others.
  SLIMECCL_CHECK(queueCopies(peers, op, stream, remote, local.empty() ? 0 : 1, capturing));
  MemOpBatch landed = asBatch(landedAll);
  SLIMECCL_CHECK(queueFlags(landed, op, stream));
  if (!local.empty()) OP_CUDA_CHECK(cudaStreamWaitEvent(stream, localDone, 0), "joining the local copy");
  return slimecclSuccess;
}

// An in-place AlltoAll sends from a snapshot: peers' blocks land over blocks this rank has yet to send.
slimecclResult_t queueCollective(GpuPeers& peers, const OpRecord& op, cudaStream_t stream,
                                 const std::vector<char*>& peerRecv, bool capturing) {
  const char* send = static_cast<const char*>(op.sendbuff);
  if (op.coll != Coll::AlltoAll || op.sendbuff != op.recvbuff)
    return queueCollectiveFrom(peers, op, send, {}, stream, peerRecv, capturing);
  const size_t bytes = op.bytes() * op.comm->nranks;
  char* snapshot = nullptr;
  SLIMECCL_CHECK(allocateSnapshot(peers.snapshotPool(), bytes, stream, op, &snapshot));
  const slimecclResult_t queued =
      queueCollectiveFrom(peers, op, snapshot, {Copy{snapshot, send, bytes}}, stream, peerRecv, capturing);
  const slimecclResult_t released = releaseSnapshot(snapshot, stream, op);
  return queued != slimecclSuccess ? queued : released;
}

// Whether this rank can run the collective GPU to GPU; fills the post's buffer addresses.
bool collectiveOnGpu(GpuPeers& peers, const OpRecord& op, int streamDevice, PostContents* post) {
  // An AllGatherOverlap on host buffers hands each block to a host callback as it lands: the host
  // must see it.
  if (streamDevice != peers.device() || op.blockListener != nullptr) return false;
  if (peers.relay() != nullptr) return relayServesCollective(peers, op, post);
  if (isGpuReduction(op)) return reductionOnGpu(peers, op, post);
  if (op.coll == Coll::Broadcast) return broadcastOnGpu(peers, op, post);
  switch (op.coll) {
    case Coll::AllGather:
    case Coll::AlltoAll: break;
    default: return false;
  }
  std::string why;
  const Region written = writtenRegion(op);
  return peers.onThisGpu(readRegion(op)) && peers.exportBuffer(written.data, written.bytes, &post->recv, &why);
}

// A collective of this call, and every rank's post of it.
struct Collective {
  OpRecord op{};
  GpuPeers* peers = nullptr;
  size_t part = 0;
  uint64_t number = 0;   // its number in the comm's collective rows
  int previous = -1;     // the comm's collective before it in this call
  bool byLines = false;  // one kernel by flagged lines: not posted on the board
  bool posted = false, matched = false;
  std::vector<PostContents> posts;  // by rank, this rank's included
};

// Posts the collective where its row has room: every peer has taken this rank's post two before.
bool tryPost(Collective& c, const std::vector<Collective>& all, int streamDevice) {
  if (c.previous >= 0 && !all[c.previous].posted) return false;
  const int me = c.op.comm->rank;
  PeerBoard& board = c.peers->board();
  for (int r = 0; r < c.op.comm->nranks && c.number >= 2; ++r)
    if (r != me && board.collTaken(me, r)->load(std::memory_order_acquire) < c.number - 1) return false;
  BoardPost* mine = board.collPost(me, c.number);
  fillPost(&mine->contents, c.op, collectiveOnGpu(*c.peers, c.op, streamDevice, &mine->contents));
  PeerBoard::publish(mine, c.number);
  c.posted = true;
  return true;
}

// Takes every rank's post of the collective once all are there, and acknowledges them (in order:
// an acknowledgement frees the slots of the posts before it).
bool tryMatch(Collective& c, const std::vector<Collective>& all) {
  if (c.previous >= 0 && !all[c.previous].matched) return false;
  const int n = c.op.comm->nranks, me = c.op.comm->rank;
  PeerBoard& board = c.peers->board();
  for (int p = 0; p < n; ++p)
    if (!PeerBoard::published(board.collPost(p, c.number), c.number)) return false;
  c.posts.clear();
  for (int p = 0; p < n; ++p) c.posts.push_back(board.collPost(p, c.number)->contents);
  for (int p = 0; p < n; ++p)
    if (p != me) board.collTaken(p, me)->store(c.number + 1, std::memory_order_release);
  c.matched = true;
  return true;
}

// The first rank whose post of the collective has not come.
int missingPoster(const Collective& c) {
  for (int p = 0; p < c.op.comm->nranks; ++p)
    if (!PeerBoard::published(c.peers->board().collPost(p, c.number), c.number)) return p;
  return c.op.comm->rank;
}

// From every rank's post: the calls match (else an error naming both), and *taken when every rank
// can run the collective GPU to GPU.
slimecclResult_t decideCollective(const Collective& c, bool* taken) {
  const OpRecord& op = c.op;
  const int me = op.comm->rank;
  const PostContents& mine = c.posts[me];
  bool allOnGpu = true;
  for (int p = 0; p < op.comm->nranks; ++p) {
    const PostContents& theirs = c.posts[p];
    if (theirs.coll != mine.coll || theirs.count != mine.count || theirs.type != mine.type ||
        theirs.root != mine.root || theirs.redOp != mine.redOp) {
      OpRecord other = op;
      describePost(theirs, &other);
      return fail(slimecclInvalidUsage, "rank {}: {} does not match peer {}'s call {}", me, describeOp(op), p,
                  describeOp(other));
    }
    allOnGpu = allOnGpu && theirs.onGpu;
  }
  *taken = allOnGpu;
  return slimecclSuccess;
}

// Queues a collective that every rank runs GPU to GPU, into the peers' buffers. *algorithm: the
// op's route names it ("" where the op has one form only).
slimecclResult_t queueDecided(const Collective& c, cudaStream_t stream, bool capturing, const char** algorithm) {
  *algorithm = "";
  if (c.peers->relay() != nullptr) {
    *algorithm = "relay";
    return queueRelayedCollective(*c.peers, c.op, stream, c.posts, capturing);
  }
  if (isGpuReduction(c.op)) {
    const GpuReductionAlgo algo = gpuReductionAlgoFor(c.op, c.posts);
    *algorithm = gpuReductionAlgoName(algo);
    return queueReduction(*c.peers, c.op, algo, stream, c.posts, capturing);
  }
  const int n = c.op.comm->nranks, me = c.op.comm->rank;
  std::vector<char*> peerRecv(n, nullptr);
  for (int p = 0; p < n; ++p)
    if (p != me) SLIMECCL_CHECK(c.peers->importBuffer(p, c.posts[p].recv, capturing, c.op, &peerRecv[p]));
  if (c.op.blockConsumer != nullptr) return queueOverlappedAllGather(*c.peers, c.op, stream, peerRecv, capturing);
  if (c.op.coll == Coll::Broadcast) {
    const GpuBroadcastAlgo algo = gpuBroadcastAlgoFor(c.op, c.posts);
    *algorithm = gpuBroadcastAlgoName(algo);
    if (algo == GpuBroadcastAlgo::Relay) return queueBroadcastRelay(*c.peers, c.op, stream, peerRecv, capturing);
    if (algo == GpuBroadcastAlgo::Pull) {
      const int root = c.op.root;
      char* rootSend = nullptr;
      if (root != me) SLIMECCL_CHECK(c.peers->importBuffer(root, c.posts[root].send, capturing, c.op, &rootSend));
      return queueBroadcastPull(*c.peers, c.op, stream, rootSend, peerRecv, c.posts[root].inPlace != 0);
    }
  }
  return queueCollective(*c.peers, c.op, stream, peerRecv, capturing);
}

// A Send or Recv of this call, and what its peer posted.
struct Message {
  OpRecord op{};
  GpuPeers* peers = nullptr;
  size_t part = 0;       // the stream part it came in
  uint64_t number = 0;   // its number in its row of the board
  int previous = -1;     // the message before it in the same row in this call
  bool byLines = false;  // in the comm's one kernel by flagged lines: not posted on the board
  bool onGpuHere = false;
  bool posted = false, matched = false;
  PostContents theirs{};     // its peer's post
  char* peerRecv = nullptr;  // a Send's destination
  bool onGpu = false;        // both sides can run it GPU to GPU
  // A Send whose bytes a Recv of the call on the GPU overwrites reads them from a snapshot
  // (src/device/send_snapshot.h) at snapshotAt, once allocated; copied there before the call's kernel
  // by lines where a Recv of that kernel overwrites them, else by the Send's round.
  bool snapshot = false, overwrittenByLines = false, snapshotCopied = false;
  char* snapshotAt = nullptr;
  const char* source() const { return snapshotAt != nullptr ? snapshotAt : static_cast<const char*>(op.sendbuff); }
};

// One round: at most one message per peer and direction, since a flag holds one signal at a time.
slimecclResult_t queueRound(GpuPeers& peers, const std::vector<const Message*>& round, cudaStream_t stream,
                            bool capturing) {
  const OpRecord& op = round.front()->op;
  Handshake ready, landed;
  std::vector<Copy> snapshots, copies;
  size_t largest = 0;
  for (const Message* m : round) {
    largest = std::max(largest, m->op.bytes());
    if (m->snapshotAt != nullptr && !m->snapshotCopied)
      snapshots.push_back({m->snapshotAt, static_cast<const char*>(m->op.sendbuff), m->op.bytes()});
    if (m->op.coll == Coll::Recv) {
      ready.set.push_back(peers.peerFlag(FlagKind::RecvReady, m->op.peer));
      landed.wait.push_back(peers.ownFlag(FlagKind::SendLanded, m->op.peer));
    } else {
      ready.wait.push_back(peers.ownFlag(FlagKind::RecvReady, m->op.peer));
      copies.push_back({m->peerRecv, m->source(), m->op.bytes()});
      landed.set.push_back(peers.peerFlag(FlagKind::SendLanded, m->op.peer));
    }
  }
  if (goesBySms(peers, op, largest, copies.size(), ready, landed))
    return queueBySms(peers, op, stream, snapshots, copies, ready, landed, round.size());
  for (const Copy& c : snapshots) SLIMECCL_CHECK(copySnapshot(c.dst, c.src, c.bytes, stream, op));
  MemOpBatch readyBatch = asBatch(ready), landedBatch = asBatch(landed);
  SLIMECCL_CHECK(queueFlags(readyBatch, op, stream));
  SLIMECCL_CHECK(queueCopies(peers, op, stream, copies, 0, capturing));
  return queueFlags(landedBatch, op, stream);
}

// Where a Send or Recv (theirs: its peer's Recv or Send) posts on the board: side 0 holds the
// Sends, written by the sender; side 1 the Recvs, written by the receiver.
struct P2PRow {
  int side, sender, receiver;
};
P2PRow rowOf(const OpRecord& op, bool theirs) {
  const int me = op.comm->rank;
  const bool send = op.coll == Coll::Send;
  return P2PRow{send != theirs ? 0 : 1, send ? me : op.peer, send ? op.peer : me};
}
BoardPost* postOf(const GpuPeers& peers, const OpRecord& op, uint64_t number, bool theirs) {
  const P2PRow row = rowOf(op, theirs);
  return peers.board().p2pPost(row.side, row.sender, row.receiver, number);
}
std::atomic<uint64_t>* takenOf(const GpuPeers& peers, const OpRecord& op, bool theirs) {
  const P2PRow row = rowOf(op, theirs);
  return peers.board().p2pTaken(row.side, row.sender, row.receiver);
}

// Whether the Send `send` reads bytes that the Recv `recv` writes (an in-place sendrecv).
bool overwrites(const OpRecord& recv, const OpRecord& send) {
  return send.coll == Coll::Send && overlaps(readRegion(send), writtenRegion(recv));
}

// Whether a Recv writes bytes that a Send of the same call reads which cannot go GPU to GPU from
// this side: that Send takes host staging, which reads its buffer once the stream reaches it, after
// the peer's copy into the Recv could have landed; so the Recv takes host staging too.
bool overwritesAStagedSend(const OpRecord& recv, const std::vector<Message>& messages, int streamDevice) {
  return std::any_of(messages.begin(), messages.end(), [&](const Message& m) {
    return overwrites(recv, m.op) && (streamDevice != m.peers->device() || !m.peers->onThisGpu(readRegion(m.op)));
  });
}

// Posts `m` where its row has room: a row's slot is free again once the reader has taken the post
// two before (the reader acknowledges in order).
bool tryPost(Message& m, const std::vector<Message>& messages, int streamDevice) {
  if (m.previous >= 0 && !messages[m.previous].posted) return false;
  const OpRecord& op = m.op;
  if (m.number >= 2 && takenOf(*m.peers, op, false)->load(std::memory_order_acquire) < m.number - 1) return false;
  BoardPost* mine = postOf(*m.peers, op, m.number, false);
  std::string why;
  // Through host relays a Recv's buffer is written by its own GPU: peers map none.
  const auto recvOnGpu = [&] {
    return m.peers->relay() != nullptr ? relayServesMessage(*m.peers, op)
                                       : m.peers->exportBuffer(op.recvbuff, op.bytes(), &mine->contents.recv, &why);
  };
  m.onGpuHere = streamDevice == m.peers->device() &&
                (op.coll == Coll::Send ? m.peers->onThisGpu(readRegion(op))
                                       : !overwritesAStagedSend(op, messages, streamDevice) && recvOnGpu());
  fillPost(&mine->contents, op, m.onGpuHere);
  PeerBoard::publish(mine, m.number);
  m.posted = true;
  return true;
}

// Takes the peer's post of `m` when it is there, and acknowledges it. Posts of a row are taken
// in order: an acknowledgement frees the slot of every post before it.
bool tryMatch(Message& m, const std::vector<Message>& messages) {
  if (m.previous >= 0 && !messages[m.previous].matched) return false;
  const BoardPost* theirs = postOf(*m.peers, m.op, m.number, true);
  if (!PeerBoard::published(theirs, m.number)) return false;
  m.theirs = theirs->contents;
  takenOf(*m.peers, m.op, true)->store(m.number + 1, std::memory_order_release);
  m.matched = true;
  return true;
}

// Posts every collective and message of the call and takes every peer's post, all at once: a
// group may hold more ops of one comm than a row has slots, and one thread may drive the ranks at
// both ends.
slimecclResult_t matchAll(std::vector<Collective>& collectives, std::vector<Message>& messages,
                          const std::vector<int>& partDevices) {
  Deadline deadline = Deadline::never();
  for (int round = 0;; ++round) {
    bool progress = false, done = true;
    for (Collective& c : collectives) {
      if (c.byLines) continue;
      if (!c.posted && tryPost(c, collectives, partDevices[c.part])) progress = true;
      if (c.posted && !c.matched && tryMatch(c, collectives)) progress = true;
      done = done && c.matched;
    }
    for (Message& m : messages) {
      if (m.byLines) continue;
      if (!m.posted && tryPost(m, messages, partDevices[m.part])) progress = true;
      if (m.posted && !m.matched && tryMatch(m, messages)) progress = true;
      done = done && m.matched;
    }
    if (done) return slimecclSuccess;
    if (progress) {
      round = 0;
      deadline = Deadline::never();
      continue;
    }
    // Waiting: on the first op not matched yet; any comm of the call that failed or was aborted ends it.
    const OpRecord* waiting = nullptr;
    int peer = -1;
    auto check = [&](const OpRecord& op, int from) -> slimecclResult_t {
      slimecclComm* comm = op.comm;
      if (waiting == nullptr) {
        waiting = &op;
        peer = from;
      }
      if (comm->aborted.load())
        return fail(slimecclInvalidUsage, "rank {}: {}: the communicator was aborted while waiting for peer {}",
                    comm->rank, describeOp(op), from);
      if (const int failed = comm->asyncError.load(); failed != slimecclSuccess) {
        std::lock_guard<std::mutex> lock(comm->errorMutex);
        return fail(static_cast<slimecclResult_t>(failed), "rank {}: {}: {}", comm->rank, describeOp(op),
                    comm->failure);
      }
      return slimecclSuccess;
    };
    for (const Collective& c : collectives)
      if (!c.byLines && !c.matched) SLIMECCL_CHECK(check(c.op, missingPoster(c)));
    for (const Message& m : messages)
      if (!m.byLines && !m.matched) SLIMECCL_CHECK(check(m.op, m.op.peer));
    slimecclComm* comm = waiting->comm;
    if (deadline.isNever()) deadline = Deadline::afterMs(comm->params.timeoutMs);
    if (round % 64 == 0 && deadline.expired())
      return fail(slimecclTimeout,
                  "rank {}: {}: peer {} has not made the matching call within {} ms (SLIMECCL_TIMEOUT_MS)", comm->rank,
                  describeOp(*waiting), peer, comm->params.timeoutMs);
    if (round < 2000)
      sched_yield();
    else
      usleep(50);
  }
}

// Decides each matched message: GPU to GPU when both sides can, with the Send's destination mapped.
slimecclResult_t decideMessages(std::vector<Message>& messages, const std::vector<int>& partDevices,
                                const std::vector<bool>& partCapturing) {
  for (Message& m : messages) {
    const OpRecord& op = m.op;
    if (m.byLines) continue;
    if (m.theirs.bytes != op.bytes()) {
      OpRecord other = op;
      describePost(m.theirs, &other);
      other.peer = op.comm->rank;
      return fail(slimecclInvalidUsage, "rank {}: {} does not match peer {}'s call {}: the sizes differ", op.comm->rank,
                  describeOp(op), op.peer, describeOp(other));
    }
    m.onGpu = m.onGpuHere && m.theirs.onGpu;
    if (m.onGpu && op.coll == Coll::Send && m.peers->relay() == nullptr) {
      // A mapping is made for the GPU current at the time: the part's.
      OnDevice on(partDevices[m.part]);
      SLIMECCL_CHECK(m.peers->importBuffer(op.peer, m.theirs.recv, partCapturing[m.part], op, &m.peerRecv));
    }
  }
  // A Send overwritten by a Recv on the GPU reads a snapshot; where its peer's Recv made it take host
  // staging, the Recv's bytes could land before it reads them.
  for (const Message& recv : messages) {
    if (recv.op.coll != Coll::Recv || !(recv.onGpu || recv.byLines)) continue;
    for (Message& send : messages) {
      if (send.byLines || !overwrites(recv.op, send.op)) continue;
      if (!send.onGpu)
        return fail(slimecclInvalidUsage,
                    "rank {}: {} receives into the bytes that its {} of the same call sends, but peer {} takes that "
                    "Send through host memory while the Recv goes GPU to GPU: give the Recv a buffer of its own",
                    recv.op.comm->rank, describeOp(recv.op), describeOp(send.op), send.op.peer);
      send.snapshot = true;
      send.overwrittenByLines = send.overwrittenByLines || recv.byLines;
    }
  }
  return slimecclSuccess;
}

// Queues one comm's GPU messages of one part through its host relays, as one plan, once every
// snapshot is copied.
slimecclResult_t queueRelayedPart(const std::vector<Message*>& mine, cudaStream_t stream, bool capturing) {
  std::vector<RelayedMessage> relayed;
  for (Message* m : mine) {
    if (m->snapshotAt != nullptr && !m->snapshotCopied) {
      SLIMECCL_CHECK(copySnapshot(m->snapshotAt, m->op.sendbuff, m->op.bytes(), stream, m->op));
      m->snapshotCopied = true;
    }
    relayed.push_back(
        {&m->op, m->op.coll == Coll::Send ? const_cast<char*>(m->source()) : static_cast<char*>(m->op.recvbuff)});
  }
  return queueRelayedMessages(*mine.front()->peers, relayed, stream, capturing);
}

// Queues one comm's GPU messages of one part in rounds: round k holds the k-th message of each
// peer and direction.
slimecclResult_t queueMessages(const std::vector<Message*>& mine, cudaStream_t stream, bool capturing) {
  if (mine.front()->peers->relay() != nullptr) return queueRelayedPart(mine, stream, capturing);
  std::vector<std::vector<const Message*>> rounds;
  const int nranks = mine.front()->op.comm->nranks;
  std::vector<int> sent(nranks, 0), received(nranks, 0);
  for (const Message* m : mine) {
    int& index = m->op.coll == Coll::Send ? sent[m->op.peer] : received[m->op.peer];
    if (static_cast<size_t>(index) == rounds.size()) rounds.emplace_back();
    rounds[index++].push_back(m);
  }
  // A Recv of one round may overwrite what a Send of a later one reads: every snapshot first.
  if (rounds.size() > 1)
    for (Message* m : mine)
      if (m->snapshotAt != nullptr && !m->snapshotCopied) {
        SLIMECCL_CHECK(copySnapshot(m->snapshotAt, m->op.sendbuff, m->op.bytes(), stream, m->op));
        m->snapshotCopied = true;
      }
  for (const auto& round : rounds) SLIMECCL_CHECK(queueRound(*mine.front()->peers, round, stream, capturing));
  return slimecclSuccess;
}

// Counts queued ops out: the comm's counters, the flight recorder, the pending count.
// `algorithm`: the op's route names it ("" where the op has one form only).
void finishQueued(const OpRecord& op, const char* algorithm) {
  op.comm->opsGpuToGpu.fetch_add(1, std::memory_order_relaxed);
  op.comm->lastRoute.started(op, slimecclRouteGpuToGpu, algorithm);
  op.comm->recorder.handedToGpu(op);
  opFinished(op.comm);
}

// What one stream part holds while its ops are decided.
struct PartState {
  cudaStream_t cuda = nullptr;
  int device = -1;
  bool capturing = false;
  std::vector<OpRecord> ops;  // as called
  std::vector<bool> queued;   // by index in ops: queued GPU to GPU (finished)
};

// Marks the op queued GPU to GPU (each call has its own trace id in its comm) and counts it out.
void markQueued(PartState& part, const OpRecord& op, const char* algorithm) {
  for (size_t i = 0; i < part.ops.size(); ++i)
    if (part.ops[i].comm == op.comm && part.ops[i].traceId == op.traceId) part.queued[i] = true;
  finishQueued(op, algorithm);
}

// Runs `queue`, which queues the op on the part's stream; the watchdog watches what reached the stream
// even when queuing failed midway.
template <typename Queue>
slimecclResult_t queueWatched(PartState& part, GpuPeers& peers, const OpRecord& op, const Queue& queue) {
  if (part.capturing) return queue();
  void* started = nullptr;
  SLIMECCL_CHECK(peers.beginOp(part.cuda, op, &started));
  const slimecclResult_t queued = queue();
  const slimecclResult_t tracked = peers.track(part.cuda, op, started);
  return queued != slimecclSuccess ? queued : tracked;
}

// Queues the part's messages: each comm's by lines as one kernel, before its messages on the board.
slimecclResult_t queuePartMessages(PartState& part, std::vector<Message>& messages, size_t partIndex) {
  std::vector<const OpRecord*> byLines;
  for (const Message& m : messages)
    if (m.part == partIndex && m.byLines) byLines.push_back(&m.op);
  while (!byLines.empty()) {
    slimecclComm* comm = byLines.front()->comm;
    auto others =
        std::stable_partition(byLines.begin(), byLines.end(), [&](const OpRecord* op) { return op->comm == comm; });
    const std::vector<const OpRecord*> ofComm(byLines.begin(), others);
    byLines.erase(byLines.begin(), others);
    SLIMECCL_CHECK(queueMessagesByLines(*comm->gpuPeers, ofComm, part.cuda, part.capturing));
    for (const OpRecord* op : ofComm) markQueued(part, *op, "lines");
  }
  std::vector<Message*> mine;
  for (Message& m : messages)
    if (m.part == partIndex && m.onGpu) mine.push_back(&m);
  while (!mine.empty()) {
    slimecclComm* comm = mine.front()->op.comm;
    auto others = std::stable_partition(mine.begin(), mine.end(), [&](const Message* m) { return m->op.comm == comm; });
    std::vector<Message*> ofComm(mine.begin(), others);
    mine.erase(mine.begin(), others);
    SLIMECCL_CHECK(queueWatched(part, *ofComm.front()->peers, ofComm.front()->op,
                                [&] { return queueMessages(ofComm, part.cuda, part.capturing); }));
    const char* algorithm = ofComm.front()->peers->relay() != nullptr ? "relay" : "";
    for (const Message* m : ofComm) markQueued(part, m->op, algorithm);
  }
  return slimecclSuccess;
}

// Queues the part's GPU work: its collectives in call order, then its messages by comm. Work that
// reached the stream is watched even when queuing it failed midway.
slimecclResult_t queuePart(PartState& part, size_t partIndex, const std::vector<Collective>& collectives,
                           std::vector<Message>& messages) {
  for (const Collective& c : collectives) {
    if (c.part != partIndex) continue;
    if (c.byLines) {
      SLIMECCL_CHECK(queueCollectiveByLines(*c.peers, c.op, part.cuda, part.capturing));
      markQueued(part, c.op, "lines");
      continue;
    }
    bool taken = false;
    SLIMECCL_CHECK(decideCollective(c, &taken));
    if (!taken) continue;
    const char* algorithm = "";
    SLIMECCL_CHECK(
        queueWatched(part, *c.peers, c.op, [&] { return queueDecided(c, part.cuda, part.capturing, &algorithm); }));
    markQueued(part, c.op, algorithm);
  }
  // Snapshots are allocated first, and copied at once where a Recv by lines may overwrite what a
  // Send on the board reads. Released once every message of the part is queued, or queuing failed.
  std::vector<Message*> snapshotted;
  slimecclResult_t rc = slimecclSuccess;
  for (Message& m : messages) {
    if (m.part != partIndex || !m.onGpu || !m.snapshot) continue;
    rc = allocateSnapshot(m.peers->snapshotPool(), m.op.bytes(), part.cuda, m.op, &m.snapshotAt);
    if (rc != slimecclSuccess) break;
    snapshotted.push_back(&m);
    if (!m.overwrittenByLines) continue;
    rc = copySnapshot(m.snapshotAt, m.op.sendbuff, m.op.bytes(), part.cuda, m.op);
    if (rc != slimecclSuccess) break;
    m.snapshotCopied = true;
  }
  if (rc == slimecclSuccess) rc = queuePartMessages(part, messages, partIndex);
  for (Message* m : snapshotted) {
    const slimecclResult_t released = releaseSnapshot(m->snapshotAt, part.cuda, m->op);
    if (rc == slimecclSuccess) rc = released;
  }
  return rc;
}

// A comm's messages of one part by lines go in one kernel; where they do not fit one, all of them go
// on the board. Then the board's messages take their numbers in their rows, alike on every rank.
void numberBoardMessages(std::vector<Message>& messages) {
  std::vector<bool> judged(messages.size(), false);
  std::vector<const OpRecord*> together;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].byLines || judged[i]) continue;
    together.clear();
    for (size_t k = i; k < messages.size(); ++k)
      if (messages[k].byLines && messages[k].part == messages[i].part && messages[k].op.comm == messages[i].op.comm) {
        together.push_back(&messages[k].op);
        judged[k] = true;
      }
    if (messagesFitOneKernel(together)) continue;
    for (Message& other : messages)
      if (other.part == messages[i].part && other.op.comm == messages[i].op.comm) other.byLines = false;
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    Message& m = messages[i];
    if (m.byLines) continue;
    const OpRecord& op = m.op;
    m.number = op.coll == Coll::Send ? m.peers->nextSendNumber(op.peer) : m.peers->nextRecvNumber(op.peer);
    for (int k = static_cast<int>(i) - 1; k >= 0; --k)
      if (!messages[k].byLines && messages[k].op.comm == op.comm && messages[k].op.coll == op.coll &&
          messages[k].op.peer == op.peer) {
        m.previous = k;
        break;
      }
  }
}

}  // namespace

slimecclResult_t takeGpuDirectOps(std::vector<StreamPart>& parts) {
  std::vector<PartState> states(parts.size());
  bool anyCapturing = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    PartState& state = states[i];
    state.ops = std::move(parts[i].ops);
    parts[i].ops.clear();
    state.queued.assign(state.ops.size(), false);
    const CudaStreamBinding& binding = *parts[i].stream->cuda;
    state.cuda = static_cast<cudaStream_t>(binding.cudaStream());
    state.device = binding.device();
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(state.cuda, &capture) != cudaSuccess) cudaGetLastError();
    state.capturing = capture != cudaStreamCaptureStatusNone;
    anyCapturing = anyCapturing || state.capturing;
  }
  // Setting up and mapping buffers call CUDA functions that a capture in the stricter modes
  // forbids; they do not touch the captured stream.
  std::optional<CaptureModeRelaxed> relaxed;
  if (anyCapturing) relaxed.emplace();

  // Every part's collectives and messages are posted before any waits for its peers: one thread
  // may drive several ranks of a comm (slimecclCommInitAll and a group).
  std::vector<Collective> collectives;
  std::vector<Message> messages;
  std::vector<int> partDevices;
  std::vector<bool> partCapturing;
  slimecclResult_t rc = slimecclSuccess;
  for (size_t i = 0; i < parts.size() && rc == slimecclSuccess; ++i) {
    PartState& state = states[i];
    partDevices.push_back(state.device);
    partCapturing.push_back(state.capturing);
    OnDevice on(state.device);
    for (const OpRecord& op : state.ops) {
      GpuPeers* peers = nullptr;
      rc = peersFor(op.comm, *parts[i].stream->cuda, &peers);
      if (rc != slimecclSuccess) break;
      if (peers == nullptr) continue;
      const bool byLines = goesByLines(*peers, op);
      if (byLines && state.device != peers->device()) {
        rc = fail(slimecclInvalidUsage,
                  "rank {}: {}: its stream is on GPU {}, but the communicator's GPU is {}: small ops run as a kernel "
                  "on the communicator's GPU",
                  op.comm->rank, describeOp(op), state.device, peers->device());
        break;
      }
      if (!op.isP2P()) {
        Collective c;
        c.op = op;
        c.peers = peers;
        c.part = i;
        c.byLines = byLines;
        if (!byLines) {
          c.number = peers->nextCollNumber();
          for (int k = static_cast<int>(collectives.size()) - 1; k >= 0; --k)
            if (collectives[k].op.comm == op.comm && !collectives[k].byLines) {
              c.previous = k;
              break;
            }
        }
        collectives.push_back(c);
        continue;
      }
      Message m;
      m.op = op;
      m.peers = peers;
      m.part = i;
      m.byLines = byLines;
      messages.push_back(m);
    }
  }
  if (rc == slimecclSuccess) numberBoardMessages(messages);
  if (rc == slimecclSuccess && (!collectives.empty() || !messages.empty())) {
    rc = matchAll(collectives, messages, partDevices);
    if (rc == slimecclSuccess) rc = decideMessages(messages, partDevices, partCapturing);
  }
  for (size_t i = 0; i < parts.size() && rc == slimecclSuccess; ++i) {
    OnDevice on(states[i].device);
    rc = queuePart(states[i], i, collectives, messages);
  }
  // What was not queued goes back: for host staging, or, on failure, to be failed.
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t k = 0; k < states[i].ops.size(); ++k)
      if (!states[i].queued[k]) parts[i].ops.push_back(states[i].ops[k]);
  if (rc != slimecclSuccess) {
    const std::string text = threadError();
    for (const StreamPart& part : parts)
      for (const OpRecord& op : part.ops) commFail(op.comm, rc, text);
    return rc;
  }
  // Host staging runs on a host thread once the stream reaches it, which a graph cannot hold. The
  // call's ops that are left all fail, and their comms with them: their peers agreed to run them.
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!states[i].capturing || parts[i].ops.empty()) continue;
    rc = fail(slimecclInvalidUsage,
              "rank {}: {}: cannot be captured in a CUDA graph: it does not go GPU to GPU (docs/cuda.md says "
              "which ops and buffers do), and host staging cannot run inside a graph",
              parts[i].ops.front().comm->rank, describeOp(parts[i].ops.front()));
    const std::string text = threadError();
    for (const StreamPart& part : parts)
      for (const OpRecord& op : part.ops) commFail(op.comm, rc, text);
    return rc;
  }
  return slimecclSuccess;
}

#else

slimecclResult_t takeGpuDirectOps(std::vector<StreamPart>&) { return slimecclSuccess; }

#endif

}  // namespace slimeccl
