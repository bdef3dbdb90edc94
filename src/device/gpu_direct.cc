#include "src/device/gpu_direct.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/device/gpu_peers.h"
#include "src/device/stream_memops.h"
#include "src/error.h"
#include "src/stream.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

struct Copy {
  char* dst;
  const char* src;
  size_t bytes;
};

slimecclResult_t cudaFailure(const slimecclComm* comm, const OpRecord& op, cudaError_t rc, const char* what) {
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "rank {}: {}: {} failed: {}", comm->rank, describeOp(op), what,
              cudaGetErrorString(rc));
}

#define OP_CUDA_CHECK(call, what)                                                       \
  do {                                                                                  \
    const cudaError_t cuda_rc_ = (call);                                                \
    if (cuda_rc_ != cudaSuccess) return cudaFailure(comm, op, cuda_rc_, what);          \
  } while (0)

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

bool onDevice(const GpuPeers& peers, Region region) {
  int device = -1;
  return region.bytes == 0 || (isDeviceMemory(region.data, &device) && device == peers.device());
}

// Waits until `post` carries the post numbered `number` by `peer`, within the comm's timeout.
slimecclResult_t waitForPost(slimecclComm* comm, const OpRecord& op, int peer, const BoardPost* post, uint64_t number) {
  if (PeerBoard::published(post, number)) return slimecclSuccess;
  const Deadline deadline = Deadline::afterMs(comm->params.timeoutMs);
  for (int round = 0;; ++round) {
    if (PeerBoard::published(post, number)) return slimecclSuccess;
    if (comm->aborted.load())
      return fail(slimecclInvalidUsage, "rank {}: {}: the communicator was aborted while waiting for peer {}",
                  comm->rank, describeOp(op), peer);
    // Failed meanwhile (the watchdog saw a peer exit): the peer may never come.
    if (const int failed = comm->asyncError.load(); failed != slimecclSuccess) {
      std::lock_guard<std::mutex> lock(comm->errorMutex);
      return fail(static_cast<slimecclResult_t>(failed), "rank {}: {}: {}", comm->rank, describeOp(op), comm->failure);
    }
    if (round % 64 == 0 && deadline.expired())
      return fail(slimecclTimeout,
                  "rank {}: {}: peer {} has not made the matching call within {} ms (SLIMECCL_TIMEOUT_MS)", comm->rank,
                  describeOp(op), peer, comm->params.timeoutMs);
    if (round < 2000) sched_yield();
    else usleep(50);
  }
}

void describePost(const BoardPost& post, OpRecord* as) {
  as->coll = static_cast<Coll>(post.coll);
  as->count = post.count;
  as->type = static_cast<slimecclDataType_t>(post.type);
  as->redOp = static_cast<slimecclRedOp_t>(post.redOp);
  as->root = post.root;
}

void fillPost(BoardPost* post, const OpRecord& op, bool onGpu) {
  post->count = op.count;
  post->bytes = op.bytes();
  post->root = op.root;
  post->coll = static_cast<uint8_t>(op.coll);
  post->type = static_cast<uint8_t>(op.type);
  post->redOp = static_cast<uint8_t>(op.redOp);
  post->onGpu = onGpu ? 1 : 0;
}

// Queues a batch of flag operations for the op.
slimecclResult_t queueFlags(MemOpBatch& batch, const OpRecord& op, cudaStream_t stream) {
  const slimecclResult_t rc = batch.enqueue(stream);
  if (rc != slimecclSuccess) prefixThreadError(fmt::format("rank {}: {}: ", op.comm->rank, describeOp(op)));
  return rc;
}

// Whether both ends of the copy are memory of one GPU.
bool sameGpu(const Copy& copy) {
  int from = -1, to = -1;
  return isDeviceMemory(copy.src, &from) && isDeviceMemory(copy.dst, &to) && from == to;
}

// Copies in one call where there are several (cudaMemcpyBatchAsync), each after what the stream
// did before.
slimecclResult_t queueCopiesOn(const slimecclComm* comm, const OpRecord& op, cudaStream_t stream,
                               const std::vector<Copy>& copies) {
  // A capture takes no batched copies: there each goes alone. A lone copy between GPUs goes to a
  // copy engine anyway; one within a GPU goes through the batch call, whose hint keeps it off the SMs.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) cudaGetLastError();
  const bool loneBetweenGpus = copies.size() == 1 && !sameGpu(copies[0]);
  if (loneBetweenGpus || capture != cudaStreamCaptureStatusNone) {
    for (const Copy& c : copies)
      OP_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream), "queuing a copy");
    return slimecclSuccess;
  }
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<size_t> sizes;
  for (const Copy& c : copies) {
    dsts.push_back(c.dst);
    srcs.push_back(c.src);
    sizes.push_back(c.bytes);
  }
  cudaMemcpyAttributes order{};
  order.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  order.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t firstWithOrder = 0;
  OP_CUDA_CHECK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), copies.size(), &order, &firstWithOrder, 1,
                                     stream),
                "queuing copies");
  return slimecclSuccess;
}

// Runs `copies` beside each other: the first on the caller's stream, the others on side streams
// from `firstSide` on, forked from it and joined back.
slimecclResult_t queueCopies(GpuPeers& peers, slimecclComm* comm, const OpRecord& op, cudaStream_t stream,
                             const std::vector<Copy>& copies, int firstSide) {
  if (copies.empty()) return slimecclSuccess;
  const int sides = peers.sideStreams() - firstSide;
  std::vector<Copy> onStream{copies[0]};
  std::vector<bool> used(peers.sideStreams(), false);
  for (size_t i = 1; i < copies.size(); ++i) {
    if (sides <= 0) {
      onStream.push_back(copies[i]);
      continue;
    }
    const int side = firstSide + static_cast<int>((i - 1) % sides);
    cudaStream_t on = static_cast<cudaStream_t>(peers.side(side));
    if (i == 1) OP_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(peers.forkEvent()), stream), "forking copies");
    if (!used[side]) OP_CUDA_CHECK(cudaStreamWaitEvent(on, static_cast<cudaEvent_t>(peers.forkEvent()), 0), "forking copies");
    used[side] = true;
    SLIMECCL_CHECK(queueCopiesOn(comm, op, on, {copies[i]}));
  }
  SLIMECCL_CHECK(queueCopiesOn(comm, op, stream, onStream));
  for (int side = 0; side < peers.sideStreams(); ++side) {
    if (!used[side]) continue;
    cudaEvent_t join = static_cast<cudaEvent_t>(peers.joinEvent(side));
    OP_CUDA_CHECK(cudaEventRecord(join, static_cast<cudaStream_t>(peers.side(side))), "joining copies");
    OP_CUDA_CHECK(cudaStreamWaitEvent(stream, join, 0), "joining copies");
  }
  return slimecclSuccess;
}

// Every peer sets `kind` on every other; each rank's stream waits for all of them, then clears them.
void exchangeFlags(const GpuPeers& peers, FlagKind kind, int rank, int nranks, MemOpBatch* batch) {
  for (int p = 0; p < nranks; ++p)
    if (p != rank) batch->write(peers.peerFlag(kind, p), 1);
  for (int p = 0; p < nranks; ++p) {
    if (p == rank) continue;
    batch->waitEquals(peers.ownFlag(kind, p), 1);
    batch->write(peers.ownFlag(kind, p), 0);
  }
}

// One collective, GPU to GPU: its local copy (out of place) starts at once on side stream 0; once
// every peer's stream has reached the op, each rank copies its blocks into the peers' buffers; once
// every peer's copies into this rank have landed, the stream goes on.
slimecclResult_t queueCollective(GpuPeers& peers, const OpRecord& op, cudaStream_t stream,
                                 const std::vector<char*>& peerRecv) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank;
  const size_t b = op.bytes();
  char* recv = static_cast<char*>(op.recvbuff);
  const char* send = static_cast<const char*>(op.sendbuff);
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
      if (send != recv) local.push_back({recv, send, b});
      for (int k = 1; k < n; ++k) remote.push_back({peerRecv[(me + k) % n], send, b});
      break;
    case Coll::AlltoAll:
      local.push_back({recv + me * b, send + me * b, b});
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        remote.push_back({peerRecv[p] + me * b, send + p * b, b});
      }
      break;
    default:
      return fail(slimecclInternalError, "rank {}: {} has no GPU-to-GPU form", me, describeOp(op));
  }
  // The local copy runs on side stream 0 from the start, beside the flag waits and the copies to
  // peers: on the caller's stream it would add its time to the op's.
  cudaEvent_t localDone = static_cast<cudaEvent_t>(peers.joinEvent(0));
  if (!local.empty()) {
    cudaStream_t side = static_cast<cudaStream_t>(peers.side(0));
    OP_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(peers.forkEvent()), stream), "forking the local copy");
    OP_CUDA_CHECK(cudaStreamWaitEvent(side, static_cast<cudaEvent_t>(peers.forkEvent()), 0), "forking the local copy");
    SLIMECCL_CHECK(queueCopiesOn(comm, op, side, local));
    OP_CUDA_CHECK(cudaEventRecord(localDone, side), "joining the local copy");
  }
  MemOpBatch arrived;
  exchangeFlags(peers, FlagKind::CollArrived, me, n, &arrived);
  SLIMECCL_CHECK(queueFlags(arrived, op, stream));
  // Side stream 0 holds the local copy: the peers' copies beside the first use the others.
  SLIMECCL_CHECK(queueCopies(peers, comm, op, stream, remote, local.empty() ? 0 : 1));
  MemOpBatch landed;
  exchangeFlags(peers, FlagKind::CollLanded, me, n, &landed);
  SLIMECCL_CHECK(queueFlags(landed, op, stream));
  if (!local.empty()) OP_CUDA_CHECK(cudaStreamWaitEvent(stream, localDone, 0), "joining the local copy");
  return slimecclSuccess;
}

// Whether this rank can run the collective GPU to GPU; *recv: where peers are to write.
bool collectiveOnGpu(GpuPeers& peers, const OpRecord& op, int streamDevice, BufferAddress* recv) {
  if (streamDevice != peers.device()) return false;
  switch (op.coll) {
    case Coll::AllGather:
    case Coll::Broadcast:
      break;
    case Coll::AlltoAll:
      // In place, peers would overwrite blocks this rank has yet to send.
      if (op.sendbuff == op.recvbuff) return false;
      break;
    default:
      return false;
  }
  std::string why;
  return onDevice(peers, readRegion(op)) && peers.exportBuffer(writtenRegion(op).data, recv, &why);
}

slimecclResult_t runCollective(GpuPeers& peers, const OpRecord& op, cudaStream_t stream, int streamDevice, bool* taken) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank;
  const uint64_t number = peers.nextCollNumber();
  BoardPost* mine = peers.board().collPost(me, number);
  fillPost(mine, op, collectiveOnGpu(peers, op, streamDevice, &mine->recv));
  PeerBoard::publish(mine, number);
  bool allOnGpu = true;
  std::vector<char*> peerRecv(n, nullptr);
  for (int p = 0; p < n; ++p) {
    const BoardPost* theirs = peers.board().collPost(p, number);
    SLIMECCL_CHECK(waitForPost(comm, op, p, theirs, number));
    if (theirs->coll != mine->coll || theirs->count != mine->count || theirs->type != mine->type ||
        theirs->root != mine->root || theirs->redOp != mine->redOp) {
      OpRecord other = op;
      describePost(*theirs, &other);
      return fail(slimecclInvalidUsage, "rank {}: {} does not match peer {}'s call {}", me, describeOp(op), p,
                  describeOp(other));
    }
    allOnGpu = allOnGpu && theirs->onGpu;
  }
  *taken = allOnGpu;
  if (!allOnGpu) return slimecclSuccess;
  for (int p = 0; p < n; ++p)
    if (p != me) SLIMECCL_CHECK(peers.importBuffer(p, peers.board().collPost(p, number)->recv, &peerRecv[p]));
  return queueCollective(peers, op, stream, peerRecv);
}

// A Send or Recv of this call with what its peer posted.
struct Message {
  OpRecord op;
  uint64_t number;
  char* peerRecv = nullptr;  // a Send's destination
  bool onGpu = false;
};

// One round: at most one message per peer and direction, since a flag holds one signal at a time.
slimecclResult_t queueRound(GpuPeers& peers, const std::vector<const Message*>& round, cudaStream_t stream) {
  const OpRecord& op = round.front()->op;
  MemOpBatch ready, landed;
  std::vector<Copy> copies;
  for (const Message* m : round)
    if (m->op.coll == Coll::Recv) ready.write(peers.peerFlag(FlagKind::RecvReady, m->op.peer), 1);
  for (const Message* m : round) {
    if (m->op.coll != Coll::Send) continue;
    ready.waitEquals(peers.ownFlag(FlagKind::RecvReady, m->op.peer), 1);
    ready.write(peers.ownFlag(FlagKind::RecvReady, m->op.peer), 0);
    copies.push_back({m->peerRecv, static_cast<const char*>(m->op.sendbuff), m->op.bytes()});
    landed.write(peers.peerFlag(FlagKind::SendLanded, m->op.peer), 1);
  }
  for (const Message* m : round) {
    if (m->op.coll != Coll::Recv) continue;
    landed.waitEquals(peers.ownFlag(FlagKind::SendLanded, m->op.peer), 1);
    landed.write(peers.ownFlag(FlagKind::SendLanded, m->op.peer), 0);
  }
  SLIMECCL_CHECK(queueFlags(ready, op, stream));
  SLIMECCL_CHECK(queueCopies(peers, op.comm, op, stream, copies, 0));
  return queueFlags(landed, op, stream);
}

// The post of a Send or Recv (theirs: its peer's Recv or Send) on the board.
BoardPost* postOf(const GpuPeers& peers, const OpRecord& op, uint64_t number, bool theirs) {
  const int me = op.comm->rank;
  const bool send = op.coll == Coll::Send;
  const int sender = send ? me : op.peer, receiver = send ? op.peer : me;
  // Side 0 holds the Sends, written by the sender; side 1 the Recvs, written by the receiver.
  return peers.board().p2pPost(send != theirs ? 0 : 1, sender, receiver, number);
}

// Whether a Recv writes bytes that a Send of the same call reads (an in-place sendrecv): the
// peer's copy could land before this rank's own copy has read them, so the pair takes host
// staging, which reads every source first.
bool overwritesASend(const OpRecord& recv, const std::vector<Message>& messages) {
  const char* to = static_cast<const char*>(recv.recvbuff);
  for (const Message& m : messages) {
    if (m.op.coll != Coll::Send) continue;
    const char* from = static_cast<const char*>(m.op.sendbuff);
    if (from < to + recv.bytes() && to < from + m.op.bytes()) return true;
  }
  return false;
}

// The Sends and Recvs of one comm in this call: each posts, then meets its peer's post; the pairs
// that both can go GPU to GPU are queued in rounds, the others go back to `rest`.
slimecclResult_t runMessages(GpuPeers& peers, std::vector<Message>& messages, cudaStream_t stream, int streamDevice,
                             std::vector<OpRecord>& rest) {
  slimecclComm* comm = messages.front().op.comm;
  const int me = comm->rank;
  const bool streamOk = streamDevice == peers.device();
  for (Message& m : messages) {
    const OpRecord& op = m.op;
    const bool send = op.coll == Coll::Send;
    m.number = send ? peers.nextSendNumber(op.peer) : peers.nextRecvNumber(op.peer);
    BoardPost* mine = postOf(peers, op, m.number, false);
    std::string why;
    const bool onGpu = streamOk && (send ? onDevice(peers, readRegion(op))
                                         : !overwritesASend(op, messages) &&
                                               peers.exportBuffer(op.recvbuff, &mine->recv, &why));
    fillPost(mine, op, onGpu);
    PeerBoard::publish(mine, m.number);
  }
  for (Message& m : messages) {
    const OpRecord& op = m.op;
    const bool send = op.coll == Coll::Send;
    const BoardPost* mine = postOf(peers, op, m.number, false);
    const BoardPost* theirs = postOf(peers, op, m.number, true);
    SLIMECCL_CHECK(waitForPost(comm, op, op.peer, theirs, m.number));
    if (theirs->bytes != op.bytes()) {
      OpRecord other = op;
      describePost(*theirs, &other);
      other.peer = me;
      return fail(slimecclInvalidUsage, "rank {}: {} does not match peer {}'s call {}: the sizes differ", me,
                  describeOp(op), op.peer, describeOp(other));
    }
    m.onGpu = mine->onGpu && theirs->onGpu;
    if (m.onGpu && send) SLIMECCL_CHECK(peers.importBuffer(op.peer, theirs->recv, &m.peerRecv));
  }
  // Round k holds the k-th GPU message of each peer and direction.
  std::vector<std::vector<const Message*>> rounds;
  std::vector<int> sent(comm->nranks, 0), received(comm->nranks, 0);
  for (const Message& m : messages) {
    if (!m.onGpu) {
      rest.push_back(m.op);
      continue;
    }
    int& index = m.op.coll == Coll::Send ? sent[m.op.peer] : received[m.op.peer];
    if (static_cast<size_t>(index) == rounds.size()) rounds.emplace_back();
    rounds[index++].push_back(&m);
  }
  for (const auto& round : rounds) SLIMECCL_CHECK(queueRound(peers, round, stream));
  return slimecclSuccess;
}

// For its scope, lets the calling thread make CUDA calls that a capture would otherwise refuse.
class CaptureModeRelaxed {
 public:
  CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&previous_); }
  ~CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&previous_); }
  CaptureModeRelaxed(const CaptureModeRelaxed&) = delete;
  CaptureModeRelaxed& operator=(const CaptureModeRelaxed&) = delete;

 private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;
};

// Ends a queued op: watched by the watchdog unless captured, recorded, counted out.
slimecclResult_t finishQueued(GpuPeers& peers, const OpRecord& op, cudaStream_t stream, bool capturing) {
  op.comm->opsGpuToGpu.fetch_add(1, std::memory_order_relaxed);
  slimecclResult_t rc = capturing ? slimecclSuccess : peers.track(stream, op);
  op.comm->recorder.finished(op, rc == slimecclSuccess, rc == slimecclSuccess ? std::string() : threadError());
  opFinished(op.comm);
  return rc;
}

}  // namespace

slimecclResult_t takeGpuDirectOps(slimecclStream_t stream, std::vector<OpRecord>& ops) {
  if (stream == nullptr || stream->cuda == nullptr || ops.empty()) return slimecclSuccess;
  const CudaStreamBinding& binding = *stream->cuda;
  cudaStream_t cuda = static_cast<cudaStream_t>(binding.cudaStream());
  OnDevice on(binding.device());
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(cuda, &capture) != cudaSuccess) cudaGetLastError();
  const bool capturing = capture != cudaStreamCaptureStatusNone;
  // Setting up and mapping buffers call CUDA functions that a capture in the stricter modes
  // forbids; they do not touch the captured stream.
  std::optional<CaptureModeRelaxed> relaxed;
  if (capturing) relaxed.emplace();

  std::vector<OpRecord> pending = std::move(ops);
  ops.clear();
  // On failure every op not yet queued goes back to the caller, which fails it.
  auto failRest = [&](size_t from, slimecclResult_t rc) {
    ops.insert(ops.end(), pending.begin() + static_cast<std::ptrdiff_t>(from), pending.end());
    return rc;
  };
  // Collectives in call order, each alone.
  std::vector<Message> messages;
  for (size_t i = 0; i < pending.size(); ++i) {
    const OpRecord& op = pending[i];
    GpuPeers* peers = nullptr;
    slimecclResult_t rc = peersFor(op.comm, binding, &peers);
    if (rc != slimecclSuccess) return failRest(i, rc);
    if (peers == nullptr) {
      ops.push_back(op);
      continue;
    }
    if (op.isP2P()) {
      messages.push_back(Message{op, 0});
      continue;
    }
    bool taken = false;
    rc = runCollective(*peers, op, cuda, binding.device(), &taken);
    if (rc != slimecclSuccess) {
      commFail(op.comm, rc, threadError());
      return failRest(i, rc);
    }
    if (!taken) {
      ops.push_back(op);
      continue;
    }
    rc = finishQueued(*peers, op, cuda, capturing);
    if (rc != slimecclSuccess) {
      commFail(op.comm, rc, threadError());
      return failRest(i + 1, rc);
    }
  }
  // Then the messages of each comm together (a group may hold several comms on one stream).
  while (!messages.empty()) {
    slimecclComm* comm = messages.front().op.comm;
    std::vector<Message> mine;
    auto others = std::stable_partition(messages.begin(), messages.end(), [&](const Message& m) { return m.op.comm == comm; });
    mine.assign(messages.begin(), others);
    messages.erase(messages.begin(), others);
    std::vector<OpRecord> hostPath;
    slimecclResult_t rc = runMessages(*comm->gpuPeers, mine, cuda, binding.device(), hostPath);
    if (rc != slimecclSuccess) {
      commFail(comm, rc, threadError());
      for (const Message& m : mine) ops.push_back(m.op);
      for (const Message& m : messages) ops.push_back(m.op);
      return rc;
    }
    ops.insert(ops.end(), hostPath.begin(), hostPath.end());
    for (const Message& m : mine) {
      if (!m.onGpu) continue;
      rc = finishQueued(*comm->gpuPeers, m.op, cuda, capturing);
      if (rc != slimecclSuccess) commFail(comm, rc, threadError());
    }
  }
  // Host staging runs on a host thread once the stream reaches it, which a graph cannot hold.
  if (capturing && !ops.empty())
    return fail(slimecclInvalidUsage,
                "rank {}: {}: cannot be captured in a CUDA graph: it does not go GPU to GPU (docs/cuda.md says which "
                "ops and buffers do), and host staging cannot run inside a graph",
                ops.front().comm->rank, describeOp(ops.front()));
  return slimecclSuccess;
}

#else

slimecclResult_t takeGpuDirectOps(slimecclStream_t, std::vector<OpRecord>&) { return slimecclSuccess; }

#endif

}  // namespace slimeccl
