#include "src/device/line_ops.h"

#include <algorithm>
#include <array>

#include "algorithms/gpu_tuning.h"
#include "algorithms/tuner.h"
#include "src/base/error.h"
#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/device/peer_board.h"

namespace slimeccl {

namespace {

bool reduces(Coll coll) { return coll == Coll::AllReduce || coll == Coll::ReduceScatter || coll == Coll::Reduce; }
bool rooted(Coll coll) { return coll == Coll::Broadcast || coll == Coll::Reduce; }

#ifdef SLIMECCL_HAVE_CUDA

// A copy within the GPU takes a block per 64 KiB, at most 8.
int copyLanes(uint64_t bytes) { return static_cast<int>(std::clamp<uint64_t>((bytes + 65535) / 65536, 1, 8)); }

// Fills a job unit by unit; each unit's messages are added just before it.
class JobBuilder {
 public:
  explicit JobBuilder(LineJob* job) : job_(*job) {}

  int message(int peer, const void* buffer, uint64_t bytes, const LineSignature& signature) {
    LineMessage& m = job_.messages[job_.messageCount];
    m.buffer = reinterpret_cast<uint64_t>(buffer);
    m.bytes = bytes;
    m.peer = peer;
    m.lanes = lineLanes(bytes);
    m.chunkBytes = static_cast<uint32_t>(lineChunkBytes(bytes));
    m.chunks = static_cast<uint32_t>((bytes + m.chunkBytes - 1) / m.chunkBytes);
    m.signature = signature;
    return job_.messageCount++;
  }

  // Sends [firstSend, firstSend + sends) to one peer and receives [firstRecv, firstRecv + recvs).
  void exchange(int firstSend, int sends, int firstRecv, int recvs) {
    int lanes = 1;
    for (int k = firstSend; k < firstSend + sends; ++k) lanes = std::max(lanes, lineLanes(job_.messages[k].bytes));
    for (int k = firstRecv; k < firstRecv + recvs; ++k) lanes = std::max(lanes, lineLanes(job_.messages[k].bytes));
    LineUnit& u = unit(LineUnitKind::Exchange, lanes);
    u.firstSend = static_cast<uint8_t>(firstSend);
    u.sends = static_cast<uint8_t>(sends);
    u.firstRecv = static_cast<uint8_t>(firstRecv);
    u.recvs = static_cast<uint8_t>(recvs);
  }

  // Sends [firstSend, ...) of `bytes` each, then reduces this rank's `src` with [firstRecv, ...) (the
  // peers', in rank order) into `dst`.
  void reduction(int firstSend, int sends, int firstRecv, int recvs, const void* src, void* dst, uint64_t bytes) {
    LineUnit& u = unit(LineUnitKind::Reduction, lineLanes(bytes));
    u.firstSend = static_cast<uint8_t>(firstSend);
    u.sends = static_cast<uint8_t>(sends);
    u.firstRecv = static_cast<uint8_t>(firstRecv);
    u.recvs = static_cast<uint8_t>(recvs);
    u.src = reinterpret_cast<uint64_t>(src);
    u.dst = reinterpret_cast<uint64_t>(dst);
    u.bytes = bytes;
  }

  void copy(void* dst, const void* src, uint64_t bytes) {
    if (bytes == 0 || dst == src) return;
    LineUnit& u = unit(LineUnitKind::Copy, copyLanes(bytes));
    u.src = reinterpret_cast<uint64_t>(src);
    u.dst = reinterpret_cast<uint64_t>(dst);
    u.bytes = bytes;
  }

 private:
  LineUnit& unit(LineUnitKind kind, int lanes) {
    LineUnit& u = job_.units[job_.unitCount++];
    u = LineUnit{};
    u.kind = kind;
    u.lanes = static_cast<uint8_t>(lanes);
    u.firstBlock = static_cast<uint16_t>(job_.blocks);
    job_.blocks += lanes;
    return u;
  }

  LineJob& job_;
};

// The buffers a kernel of GPU `device` reads and writes for the op must be within its reach.
slimecclResult_t checkReach(const GpuPeers& peers, const OpRecord& op) {
  for (const Region& region : {readRegion(op), writtenRegion(op)}) {
    if (region.bytes == 0 || peers.zone()->reaches(region.data, region.bytes, peers.device())) continue;
    return fail(slimecclInvalidUsage,
                "rank {}: {}: ops of this size on a CUDA-ordered stream run as one kernel on every rank's GPU "
                "(docs/cuda.md), which cannot reach {}: its buffers must be device memory of GPU {} or pinned host "
                "memory",
                op.comm->rank, describeOp(op), static_cast<const void*>(region.data), peers.device());
  }
  return slimecclSuccess;
}

// A job of the comm's zones, ordered after the comm's last op where that went elsewhere.
slimecclResult_t startJob(GpuPeers& peers, const OpRecord& op, void* stream, bool capturing, LineJob* job) {
  *job = peers.zone()->jobTemplate();
  job->signature = lineSignatureOf(op);
  job->eager = capturing ? 0 : 1;
  return capturing ? slimecclSuccess : peers.beginLineOp(stream, op);
}

// Launches the job (`ops` ops of the comm; none where it has nothing to do); the comm's last op is
// then this kernel.
slimecclResult_t launch(GpuPeers& peers, const OpRecord& op, LineJob& job, void* stream, size_t ops) {
  op.comm->opsByLines.fetch_add(ops, std::memory_order_relaxed);
  if (job.unitCount == 0) return slimecclSuccess;
  const uint32_t doneAt = job.eager ? peers.zone()->countBlocks(job.blocks) : 0;
  // Moving bytes takes any one kernel; a reduction's, its type and operator.
  const bool reduction = reduces(op.coll);
  const int launched =
      launchLines(job, peers.device(), reduction ? op.type : slimecclInt8, reduction ? op.redOp : slimecclSum, stream);
  if (launched != 0) return failOpStep(op, launched, "launching its kernel by flagged lines");
  if (job.eager) peers.lineOpQueued(stream, doneAt);
  noteGrid(op.comm, job.blocks);
  return slimecclSuccess;
}

#endif

}  // namespace

LineSignature lineSignatureOf(const OpRecord& op) {
  LineSignature s;
  if (op.isP2P()) {
    s.count = op.bytes();
    s.coll = static_cast<uint8_t>(Coll::Send);
    return s;
  }
  s.count = op.count;
  s.coll = static_cast<uint8_t>(op.coll);
  s.type = static_cast<uint8_t>(op.type);
  if (reduces(op.coll)) s.redOp = op.premul.on ? kPreMulSumPost : static_cast<uint8_t>(op.redOp);
  if (rooted(op.coll)) s.root = op.root;
  return s;
}

std::string describeLineCall(const LineSignature& call) {
  const auto coll = static_cast<Coll>(call.coll);
  if (isPointToPoint(coll)) return fmt::format("a Send or Recv of {} bytes", call.count);
  if (call.coll > static_cast<uint8_t>(Coll::AlltoAll)) return fmt::format("an unknown call (kind {})", call.coll);
  std::string text = fmt::format(
      "{} (count {}, {}", collName(coll), call.count,
      call.type < slimecclNumTypes ? typeName(static_cast<slimecclDataType_t>(call.type)) : "an unknown type");
  if (reduces(coll))
    text += fmt::format(", {}", call.redOp == kPreMulSumPost  ? "PreMulSum"
                                : call.redOp < slimecclNumOps ? redOpName(static_cast<slimecclRedOp_t>(call.redOp))
                                                              : "an unknown operator");
  if (rooted(coll)) text += fmt::format(", root {}", call.root);
  return text + ")";
}

bool goesByLines(const GpuPeers& peers, const OpRecord& op) {
  // An AllGather whose blocks a consumer takes goes by lines too where a plain one would: a peer may
  // run the plain one against it, and both ranks must take the same route. Its consumer is then
  // handed every block after the op (src/overlap/allgather_overlap.cc).
  if (peers.zone() == nullptr || op.blockListener != nullptr) return false;
  if (reduces(op.coll) && !op.premul.on && !(op.redOp >= 0 && op.redOp < slimecclNumOps)) return false;
  const int n = op.comm->nranks;
  const size_t bytes = op.isP2P() ? op.bytes() : opBytes(op.coll, op.count, typeSize(op.type), n);
  return bytes <= peers.lineBytes().value_or(lineMaxBytes(op.coll, n));
}

bool messagesFitOneKernel(const std::vector<const OpRecord*>& ops) {
  // A unit per peer, and one per copy to itself (a Send and a Recv).
  std::array<bool, kLineMaxRanks> peers{};
  int units = 0, toItself = 0;
  for (const OpRecord* op : ops) {
    if (op->peer < 0 || op->peer >= kLineMaxRanks) return false;
    if (op->peer == op->comm->rank) {
      ++toItself;
      continue;
    }
    units += peers[op->peer] ? 0 : 1;
    peers[op->peer] = true;
  }
  units += (toItself + 1) / 2;
  // A job may also carry each Send's copy for a snapshot: at most one message per op.
  return ops.size() <= static_cast<size_t>(kLineMaxMessages) && units <= kLineMaxUnits;
}

#ifdef SLIMECCL_HAVE_CUDA

slimecclResult_t queueCollectiveByLines(GpuPeers& peers, const OpRecord& op, void* stream, bool capturing) {
  SLIMECCL_CHECK(checkReach(peers, op));
  LineJob job;
  SLIMECCL_CHECK(startJob(peers, op, stream, capturing, &job));
  const int n = op.comm->nranks, me = op.comm->rank;
  const uint64_t b = op.bytes();
  char* recv = static_cast<char*>(op.recvbuff);
  const char* send = static_cast<const char*>(op.sendbuff);
  const LineSignature& sig = job.signature;
  JobBuilder build(&job);
  switch (op.coll) {
    case Coll::AllGather: {
      const char* mine = isInPlace(op) ? recv + me * b : send;
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        const int s = build.message(p, mine, b, sig);
        build.exchange(s, 1, build.message(p, recv + p * b, b, sig), 1);
      }
      if (!isInPlace(op)) build.copy(recv + me * b, send, b);
      break;
    }
    case Coll::AlltoAll:
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        const int s = build.message(p, send + p * b, b, sig);
        build.exchange(s, 1, build.message(p, recv + p * b, b, sig), 1);
      }
      build.copy(recv + me * b, send + me * b, b);
      break;
    case Coll::Broadcast:
      if (me == op.root) {
        for (int k = 1; k < n; ++k) build.exchange(build.message((me + k) % n, send, b, sig), 1, 0, 0);
        build.copy(recv, send, b);
      } else {
        build.exchange(0, 0, build.message(op.root, recv, b, sig), 1);
      }
      break;
    case Coll::AllReduce:
    case Coll::ReduceScatter:
    case Coll::Reduce: {
      // A Reduce's root only receives and its other ranks only send (a PreMulSum's input
      // multiplied first); AllReduce and ReduceScatter ranks do both.
      const bool scatter = op.coll == Coll::ReduceScatter;
      const bool sends = op.coll != Coll::Reduce || me != op.root;
      const bool receives = op.coll != Coll::Reduce || me == op.root;
      const int firstSend = job.messageCount;
      for (int p = 0; p < n && sends; ++p)
        if (p != me && (op.coll != Coll::Reduce || p == op.root))
          build.message(p, scatter ? send + p * b : send, b, sig);
      const int firstRecv = job.messageCount;
      for (int p = 0; p < n && receives; ++p)
        if (p != me) build.message(p, nullptr, b, sig);
      build.reduction(firstSend, firstRecv - firstSend, firstRecv, job.messageCount - firstRecv,
                      scatter ? send + me * b : send, receives ? recv : nullptr, b);
      if (op.redOp == slimecclAvg) job.divisor = n;
      if (op.premul.on) {
        job.premul = 1;
        job.scalarPointer = reinterpret_cast<uint64_t>(op.premul.device);
        job.scalarBits = op.premul.bits;
        if (op.premul.device != nullptr && !kernelReaches(op.premul.device, peers.device()))
          return fail(
              slimecclInvalidUsage,
              "rank {}: {}: its PreMulSum scalar at {} is out of reach of a kernel on GPU {}: it must be device "
              "memory of that GPU",
              me, describeOp(op), op.premul.device, peers.device());
      }
      break;
    }
    default: return fail(slimecclInternalError, "rank {}: {} has no form by flagged lines", me, describeOp(op));
  }
  return launch(peers, op, job, stream, 1);
}

slimecclResult_t queueMessagesByLines(GpuPeers& peers, const std::vector<const OpRecord*>& ops, void* stream,
                                      bool capturing) {
  const OpRecord& first = *ops.front();
  const int n = first.comm->nranks, me = first.comm->rank;
  std::array<int, kLineMaxRanks> sendsTo{}, recvsFrom{};
  for (const OpRecord* op : ops) {
    SLIMECCL_CHECK(checkReach(peers, *op));
    ++(op->coll == Coll::Send ? sendsTo : recvsFrom)[op->peer];
  }
  // A Send to itself and a Recv from itself pair up in call order.
  std::vector<const OpRecord*> selfSends, selfRecvs;
  for (const OpRecord* op : ops)
    if (op->peer == me) (op->coll == Coll::Send ? selfSends : selfRecvs).push_back(op);
  for (size_t i = 0; i < std::max(selfSends.size(), selfRecvs.size()); ++i) {
    if (i < selfSends.size() && i < selfRecvs.size() && selfSends[i]->bytes() == selfRecvs[i]->bytes()) continue;
    const OpRecord& odd = i < selfSends.size() ? *selfSends[i] : *selfRecvs[i];
    return fail(slimecclInvalidUsage,
                "rank {}: {}: a rank's Send to itself needs a Recv from itself of the same size in the same group", me,
                describeOp(odd));
  }
  // In place: some Recv writes what some Send reads. A peer's one Recv into exactly the bytes of its
  // one Send needs no snapshot: the same threads read each step's bytes before they write them.
  bool overlap = false;
  for (const OpRecord* r : ops)
    for (const OpRecord* s : ops) {
      if (r->coll != Coll::Recv || s->coll != Coll::Send || !overlaps(writtenRegion(*r), readRegion(*s))) continue;
      const bool sameSteps = r->peer == s->peer && r->peer != me && r->recvbuff == s->sendbuff &&
                             r->bytes() == s->bytes() && sendsTo[r->peer] == 1 && recvsFrom[r->peer] == 1;
      overlap = overlap || !sameSteps;
    }
  LineJob job;
  SLIMECCL_CHECK(startJob(peers, first, stream, capturing, &job));
  JobBuilder build(&job);
  std::vector<int> sources;  // the messages a snapshot copies
  for (int peer = 0; peer < n; ++peer) {
    if (peer == me || sendsTo[peer] + recvsFrom[peer] == 0) continue;
    const int firstSend = job.messageCount;
    for (const OpRecord* op : ops)
      if (op->peer == peer && op->coll == Coll::Send)
        sources.push_back(build.message(peer, op->sendbuff, op->bytes(), lineSignatureOf(*op)));
    const int firstRecv = job.messageCount;
    for (const OpRecord* op : ops)
      if (op->peer == peer && op->coll == Coll::Recv)
        build.message(peer, op->recvbuff, op->bytes(), lineSignatureOf(*op));
    build.exchange(firstSend, firstRecv - firstSend, firstRecv, job.messageCount - firstRecv);
  }
  std::vector<const void*> selfSources;
  for (const OpRecord* s : selfSends) selfSources.push_back(s->sendbuff);
  if (overlap) {
    // Each Send's bytes, and each copy to itself's, go aside first, 16-byte aligned.
    const size_t peerSources = sources.size();
    for (const OpRecord* s : selfSends) sources.push_back(build.message(me, s->sendbuff, s->bytes(), LineSignature{}));
    uint64_t total = 0;
    for (int k : sources) total += (job.messages[k].bytes + 15) / 16 * 16;
    char* space = static_cast<char*>(peers.zone()->snapshotSpace(std::max<uint64_t>(total, 16)));
    if (space == nullptr)
      return fail(slimecclSystemError,
                  "rank {}: {}: allocating {} bytes of device memory for a snapshot of its sends failed", me,
                  describeOp(first), total);
    uint64_t at = 0;
    for (int k : sources) {
      job.messages[k].snapshotAt = reinterpret_cast<uint64_t>(space + at);
      at += (job.messages[k].bytes + 15) / 16 * 16;
    }
    for (size_t i = 0; i < selfSends.size(); ++i)
      selfSources[i] = reinterpret_cast<const void*>(job.messages[sources[peerSources + i]].snapshotAt);
    job.snapshot = 1;
  }
  for (size_t i = 0; i < selfSends.size(); ++i)
    build.copy(selfRecvs[i]->recvbuff, selfSources[i], selfSends[i]->bytes());
  return launch(peers, first, job, stream, ops.size());
}

#else

slimecclResult_t queueCollectiveByLines(GpuPeers&, const OpRecord&, void*, bool) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t queueMessagesByLines(GpuPeers&, const std::vector<const OpRecord*>&, void*, bool) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}

#endif

}  // namespace slimeccl
