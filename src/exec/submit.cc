#include "src/exec/submit.h"

#include <algorithm>
#include <exception>
#include <memory>

#include "algorithms/catalog.h"
#include "algorithms/p2p.h"
#include "algorithms/tuner.h"
#include "src/comm.h"
#include "src/device/device_staging.h"
#include "src/exec/chunked_run.h"
#include "src/device/gpu_direct.h"
#include "src/exec/eager_p2p.h"
#include "src/base/error.h"
#include "src/exec/block_listener.h"
#include "src/exec/executor.h"
#include "src/exec/host_tiers.h"
#include "src/exec/input_gate.h"
#include "src/exec/mailbox_run.h"
#include "src/exec/premultiply.h"
#include "src/stream.h"
#include "src/base/util/per_thread.h"

namespace slimeccl {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<OpRecord> ops;
  // The stream of each comm's ops in the group (few comms per group: a scan is enough).
  std::vector<std::pair<const slimecclComm*, slimecclStream_t>> streams;

  // The stream `comm`'s ops in the group use, taking `stream` for a comm that has none yet; a
  // group's ops of one comm all run in one executor run, so they cannot be split over streams.
  slimecclStream_t streamOf(const slimecclComm* comm, slimecclStream_t stream) {
    for (const auto& [c, s] : streams)
      if (c == comm) return s;
    streams.emplace_back(comm, stream);
    return stream;
  }
  void clear() {
    ops.clear();
    streams.clear();
  }
  // The ops, taken out of the thread's group state before they run: a consumer of an AllGather's
  // blocks may call slimeccl (on another comm) while they are queued.
  std::vector<OpRecord> takeOps() {
    std::vector<OpRecord> taken;
    taken.swap(ops);
    clear();
    return taken;
  }
  // Gives the memory of ops taken and run back to the thread's next call or group: a tiny op would
  // otherwise spend more on allocating its vector than on moving its bytes.
  void keepMemoryOf(std::vector<OpRecord>& taken) {
    taken.clear();
    if (ops.empty()) ops.swap(taken);
  }
};
// The calling thread's open group.
GroupState& openGroup() { return perThread<GroupState>(); }

// The op's schedule; *algo: the collective's algorithm (left alone for Send/Recv).
Schedule scheduleFor(const OpRecord& op, size_t* chunkBytes, Algo* algo) {
  slimecclComm* comm = op.comm;
  *chunkBytes = comm->params.chunkBytes != 0 ? comm->params.chunkBytes : kDefaultChunkBytes;
  if (op.isP2P() && comm->params.chunkBytes == 0) *chunkBytes = kP2PChunkBytes;
  if (op.coll == Coll::Send) return sendSchedule(op.peer, op.bytes());
  if (op.coll == Coll::Recv) return recvSchedule(op.peer, op.bytes());
  size_t typeBytes = typeSize(op.type);
  TunerChoice choice =
      chooseAlgorithm(op.coll, opBytes(op.coll, op.count, typeBytes, comm->nranks), comm->nranks,
                      TunerTopology{comm->topology.singleHost(), comm->mailbox != nullptr}, comm->algoOverrides);
  if (comm->params.chunkBytes == 0) *chunkBytes = choice.chunkBytes;
  *algo = choice.algo;
  ScheduleRequest request{op.coll, choice.algo,   op.count,     typeBytes,  op.redOp,
                          op.root, isInPlace(op), comm->nranks, comm->rank, &comm->topology};
  SLIMECCL_TRACE(kLogTune, comm->rank, "{}: algorithm {}{}", describeOp(op), algoName(choice.algo),
                 choice.forced ? " (SLIMECCL_ALGO)" : "");
  return buildCollective(request);
}

// Whether the receive buffers of the op's ranks on this host together outgrow the cache.
bool writesPastTheCache(const OpRecord& op) {
  const slimecclComm* comm = op.comm;
  if (comm->params.streamCopyBytes == 0) return false;
  const std::vector<int>& hostOf = comm->topology.hostOf;
  size_t ranksHere = hostOf.empty() ? 1 : std::count(hostOf.begin(), hostOf.end(), hostOf[comm->rank]);
  return writtenRegion(op).bytes * ranksHere >= comm->params.streamCopyBytes;
}

std::unique_ptr<OpPlan> planFor(const OpRecord& op) {
  slimecclComm* comm = op.comm;
  if (auto cached = comm->planCache.take(op, comm->rank)) return cached;
  auto plan = std::make_unique<OpPlan>();
  plan->op = op;
  size_t chunkBytes = kDefaultChunkBytes;
  Algo algo = Algo::Ring;
  // Only a listener's op reaches here with nothing to move: its blocks are complete at once.
  if (op.bytes() != 0) {
    plan->schedule = scheduleFor(op, &chunkBytes, &algo);
    if (!op.isP2P()) plan->algorithm = algoName(algo);
  }
  if (mailboxCarries(comm, op, algo))
    lowerForMailbox(plan.get());
  else
    lowerSchedule(plan.get(), comm->rank, comm->nranks, chunkBytes);
  plan->streamingStores = writesPastTheCache(op);
  SLIMECCL_TRACE(kLogColl, comm->rank, "{}:\n{}", describeOp(op), describeSchedule(plan->schedule));
  if (op.blockListener != nullptr) {
    op.blockListener->begin();
    plan->blockWatch = std::make_unique<BlockWatch>(plan->schedule, comm->nranks, op.bytes(), op.blockListener.get());
    plan->blockWatch->start();
  }
  return plan;
}

// Queues each part on its stream. Ops on CUDA-ordered streams first go GPU to GPU where they can
// (src/device/gpu_direct.h), every part's before any waits for peers; the rest are queued as
// host-run ops.
slimecclResult_t dispatchToStreams(std::vector<StreamPart>& parts) {
  std::vector<StreamPart> onCuda;
  std::vector<StreamPart> onHost;
  for (StreamPart& part : parts) (part.stream->cuda != nullptr ? onCuda : onHost).push_back(std::move(part));
  slimecclResult_t first = slimecclSuccess;
  if (!onCuda.empty()) {
    first = takeGpuDirectOps(onCuda);
    if (first != slimecclSuccess) {
      // The ops it could not queue fail with it.
      const std::string text = threadError();
      for (StreamPart& part : onCuda) {
        for (const OpRecord& op : part.ops) {
          op.comm->recorder.finished(op, false, text);
          opFinished(op.comm);
        }
        part.ops.clear();
      }
    }
  }
  // Every part that can be queued is, before any part runs here: a part run here waits for its
  // peers, whose ops may be the later parts (one thread may drive several ranks).
  std::vector<std::pair<slimecclStream_t, std::vector<OpRecord>>> here;
  for (StreamPart& part : onCuda) {
    if (part.ops.empty()) continue;
    bool queued = false;
    slimecclResult_t rc = streamEnqueueCuda(part.stream, part.ops, &queued);
    if (!queued) here.emplace_back(part.stream, std::move(part.ops));
    if (first == slimecclSuccess) first = rc;
  }
  for (StreamPart& part : onHost) {
    if (part.ops.empty()) continue;
    slimecclResult_t rc = streamEnqueue(part.stream, std::move(part.ops));
    if (first == slimecclSuccess) first = rc;
  }
  if (!here.empty()) {
    slimecclResult_t rc = streamsRunHere(here);
    if (first == slimecclSuccess) first = rc;
  }
  return first;
}

// Runs or queues ops that share one stream (nullptr: the calling thread).
slimecclResult_t dispatch(slimecclStream_t stream, const std::vector<OpRecord>& ops) {
  if (stream != nullptr && stream->cuda == nullptr) return streamEnqueue(stream, ops);
  if (stream != nullptr) {
    std::vector<StreamPart> parts{StreamPart{stream, ops}};
    return dispatchToStreams(parts);
  }
  slimecclResult_t rc = executeOps(ops, CopyOrder::AfterLegacyStream);
  for (const OpRecord& op : ops) opFinished(op.comm);
  return rc;
}

// Runs or queues the ops of a group that ended.
slimecclResult_t dispatchGroup(std::vector<OpRecord>& ops) {
  bool oneStream =
      std::all_of(ops.begin(), ops.end(), [&](const OpRecord& op) { return op.stream == ops.front().stream; });
  if (oneStream && !ops.empty() && ops.front().stream == nullptr) {
    // A blocking exchange of small messages (sendrecv) goes as eager messages.
    slimecclResult_t rc;
    if (runEagerP2P(ops, &rc)) {
      for (const OpRecord& op : ops) opFinished(op.comm);
      return rc;
    }
  }
  for (OpRecord& op : ops)
    if (op.stream == nullptr) op.comm->recorder.queued(op);
  if (oneStream) return ops.empty() ? slimecclSuccess : dispatch(ops.front().stream, ops);
  // Ops on one stream run together there; ops without a stream run here. Each comm's ops are on
  // one stream (submitOp), so no part waits for another's lock.
  // Parts in the order of their first call: every rank then sets up a comm's GPU path, which is
  // collective, in the same order.
  std::vector<StreamPart> parts;
  std::vector<OpRecord> local;
  for (const OpRecord& op : ops) {
    if (op.stream == nullptr) {
      local.push_back(op);
      continue;
    }
    auto part = std::find_if(parts.begin(), parts.end(), [&](const StreamPart& p) { return p.stream == op.stream; });
    if (part == parts.end()) part = parts.insert(parts.end(), StreamPart{op.stream, {}});
    part->ops.push_back(op);
  }
  slimecclResult_t first = dispatchToStreams(parts);
  if (!local.empty()) {
    slimecclResult_t rc = dispatch(nullptr, local);
    if (first == slimecclSuccess) first = rc;
  }
  return first;
}

// The bytes an op reads on this rank when they may be overwritten by a receive of the same
// group: a Send's source, and AlltoAll's send buffer (its schedules assume distinct buffers).
std::pair<const char*, size_t> snapshotSource(const OpRecord& op) {
  if (op.coll == Coll::Send) return {static_cast<const char*>(op.sendbuff), op.bytes()};
  if (op.coll == Coll::AlltoAll) return {static_cast<const char*>(op.sendbuff), op.bytes() * op.comm->nranks};
  return {nullptr, 0};
}

// Copies of send buffers taken by one thread's calls, kept for its next call: a repeated call
// then gets the same snapshot addresses, so its plan comes from the plan cache, and no
// allocation (a loop of 64 MiB in-place sendrecvs over sockets took 7x the out-of-place time when
// each call allocated its copy afresh). A copy above kKeptSnapshotBytes stays only while the calls
// use it for about as many bytes (at least half its capacity).
class Snapshots {
 public:
  const char* take(const char* src, size_t bytes) {
    std::vector<char>& copy = next();
    copy.assign(src, src + bytes);
    return copy.data();
  }
  // The same of device memory of GPU `device`, copied to host memory by the GPU.
  slimecclResult_t takeFromDevice(const char* src, size_t bytes, int device, const void** out) {
    std::vector<char>& copy = next();
    copy.resize(bytes);
    SLIMECCL_CHECK(gpuCopy(copy.data(), src, bytes, device, CopyOrder::Unordered));
    *out = copy.data();
    return slimecclSuccess;
  }
  void release() {
    for (size_t i = 0; i < copies_.size(); ++i) {
      std::vector<char>& copy = copies_[i];
      const bool fits = i < used_ && copy.size() >= copy.capacity() / 2;
      if (copy.capacity() > kKeptSnapshotBytes && !fits) std::vector<char>().swap(copy);
    }
    used_ = 0;
  }

 private:
  std::vector<char>& next() {
    if (used_ == copies_.size()) copies_.emplace_back();
    return copies_[used_++];
  }

  static constexpr size_t kKeptSnapshotBytes = 1 << 20;
  std::vector<std::vector<char>> copies_;
  size_t used_ = 0;
};

// Whether `writer` (of the same group, or `reader` itself) writes bytes that `reader`'s source holds.
bool overwritesSource(const OpRecord& writer, const OpRecord& reader) {
  auto [src, srcLen] = snapshotSource(reader);
  const Region written = writtenRegion(writer);
  return src != nullptr && writer.comm == reader.comm && written.data != nullptr &&
         overlaps(Region{src, srcLen}, written);
}

// A Send (or AlltoAll) whose source is also written by a receive of the same group (in-place
// sendrecv or alltoall) must read its data before any of it is overwritten: it reads a snapshot
// taken now. A Send whose device buffer the net would read itself reads a snapshot in host memory.
slimecclResult_t snapshotOverwrittenSources(std::vector<OpRecord>& ops, Snapshots& snapshots) {
  for (OpRecord& reader : ops) {
    for (const OpRecord& writer : ops) {
      if (!overwritesSource(writer, reader)) continue;
      auto [src, srcLen] = snapshotSource(reader);
      if (!reader.netReachesDevice) {
        reader.sendbuff = snapshots.take(src, srcLen);
        break;
      }
      const slimecclResult_t rc = snapshots.takeFromDevice(src, srcLen, reader.comm->gdrGpu, &reader.sendbuff);
      if (rc != slimecclSuccess) {
        prefixThreadError(
            fmt::format("rank {}: {}: a snapshot of its send buffer: ", reader.comm->rank, describeOp(reader)));
        return rc;
      }
      reader.netReachesDevice = false;
      break;
    }
  }
  return slimecclSuccess;
}

// What executeOps works with, reused by the next call of the same thread.
struct ExecScratch {
  std::vector<OpRecord> ops;
  Snapshots snapshots;
  std::vector<std::vector<char>> premultiplied;  // PreMulSum ops' inputs times their scalars
  std::vector<std::unique_ptr<OpPlan>> owned;
  std::vector<OpPlan*> plans;
  std::vector<slimecclComm*> comms;  // whose executor locks the run holds

  // Drops what the call held (plans, listeners, large snapshots) and keeps the capacity.
  void clear() {
    ops.clear();
    snapshots.release();
    premultiplied.clear();
    owned.clear();
    plans.clear();
    comms.clear();
  }
};

// Kept between calls of this thread (emptied after each): a small op would otherwise spend more
// on allocating these than on moving its bytes. No call of one thread runs inside another.
ExecScratch& execScratch() { return perThread<ExecScratch>(); }

// The op's plan, marked running; its comm's executor lock is held.
std::unique_ptr<OpPlan> startPlan(OpRecord& op) {
  std::unique_ptr<OpPlan> plan = planFor(op);
  op.comm->recorder.running(op, plan.get());
  op.comm->lastRoute.started(op, plan->mailbox ? slimecclRouteSharedSlots : slimecclRouteNet, plan->algorithm);
  if (op.comm->mailbox && !op.isP2P()) op.comm->mailbox->announce(op.comm->rank, op);
  return plan;
}

// Plans and runs the ops under the executor locks of their comms; plans of a run that succeeded
// go back to the plan caches (those of ops with a listener stay with the call: its callbacks may
// still be running).
slimecclResult_t runLocked(ExecScratch& x) {
  for (const OpRecord& op : x.ops) x.comms.push_back(op.comm);
  ExecLocks locks(x.comms);
  for (OpRecord& op : x.ops) {
    x.owned.push_back(startPlan(op));
    x.plans.push_back(x.owned.back().get());
  }
  slimecclResult_t rc = x.plans.empty() ? slimecclSuccess : runPlans(x.plans, x.comms);
  if (rc == slimecclSuccess)
    for (size_t i = 0; i < x.ops.size(); ++i)
      if (x.ops[i].blockListener == nullptr) x.ops[i].comm->planCache.keep(std::move(x.owned[i]));
  return rc;
}

// Plans and runs the ops, all of whose buffers are host memory by now.
slimecclResult_t runStaged(ExecScratch& x) {
  slimecclResult_t rc = snapshotOverwrittenSources(x.ops, x.snapshots);
  if (rc == slimecclSuccess) rc = runLocked(x);
  // An op with a listener ends when its listener is done (its last callback has returned), which
  // happens outside the locks: a callback may call into the comm.
  for (const OpRecord& op : x.ops) {
    if (op.blockListener == nullptr) continue;
    slimecclResult_t ended = op.blockListener->end(rc);
    if (rc == slimecclSuccess) rc = ended;
  }
  return rc;
}

// Whether a call alone on the calling thread (no group, no stream) can skip executeOps's work for
// groups: it has host buffers, no listener, does not read what it writes, and does not run through
// the chunk arena.
bool runsAlone(const OpRecord& op) {
  return op.blockListener == nullptr && op.inputGate == nullptr && !op.premul.on && !overwritesSource(op, op) &&
         !DeviceStaging::onDevice(op) && !runsThroughArena(op);
}

// What the executor does when an allocation fails while it plans ops (a snapshot, a staging area,
// a plan; nothing else throws there): the ops fail with a sentence naming the first, and so do
// their comms, since the ops' sequence numbers are spent and the peers would wait for them.
slimecclResult_t failThrown(const OpRecord* ops, size_t count, const std::exception& e) {
  const OpRecord& first = ops[0];
  slimecclResult_t rc = fail(slimecclSystemError, "rank {}: {}: cannot allocate what the op needs ({})",
                             first.comm->rank, describeOp(first), e.what());
  const std::string text = threadError();
  for (size_t i = 0; i < count; ++i) {
    ops[i].comm->recorder.finished(ops[i], false, text);
    commFail(ops[i].comm, rc, text);
  }
  return rc;
}

// Runs such a call: for a tiny op, executeOps's bookkeeping would cost more than moving its bytes.
slimecclResult_t runAlone(OpRecord& op) {
  slimecclComm* comm = op.comm;
  slimecclResult_t rc;
  try {
    std::lock_guard<std::mutex> lock(comm->execMutex);
    std::unique_ptr<OpPlan> plan = startPlan(op);
    rc = runPlan(plan.get());
    if (rc == slimecclSuccess) comm->planCache.keep(std::move(plan));
  } catch (const std::exception& e) {
    return failThrown(&op, 1, e);
  }
  comm->recorder.finished(op, rc == slimecclSuccess, threadError());
  return rc;
}

// Runs the ops of a call or group, or of one round of its chunks: ops on device buffers that are not
// cut into chunks run on host copies of them (unless `onHost` says every buffer is host memory),
// PreMulSum inputs are multiplied first.
slimecclResult_t runOps(ExecScratch& x, CopyOrder deviceCopies, bool onHost = false) {
  std::unique_ptr<DeviceStaging> staging;
  slimecclResult_t rc = onHost ? slimecclSuccess : DeviceStaging::stage(x.ops, &staging);
  if (staging != nullptr)
    for (OpRecord& op : x.ops) op.comm->recorder.queued(op);
  if (rc == slimecclSuccess && staging != nullptr) rc = staging->copyIn(deviceCopies);
  if (rc == slimecclSuccess) rc = premultiplyInputs(x.ops, x.premultiplied, deviceCopies);
  if (rc == slimecclSuccess) {
    rc = runStaged(x);
    if (rc == slimecclSuccess && staging != nullptr) rc = staging->copyOut(deviceCopies);
  } else {
    for (const OpRecord& op : x.ops) commFail(op.comm, rc, threadError());
  }
  return rc;
}

// The ops of a call or group that ran in rounds end together: a failure fails each one's comm
// (a round may have left its peers mid-op), and each is recorded.
void endRounds(const std::vector<OpRecord>& whole, slimecclResult_t rc) {
  if (rc != slimecclSuccess)
    for (const OpRecord& op : whole) commFail(op.comm, rc, threadError());
  for (const OpRecord& op : whole) op.comm->recorder.finished(op, rc == slimecclSuccess, threadError());
}

slimecclResult_t executeScratch(ExecScratch& x, CopyOrder deviceCopies) {
  sortForExecution(x.ops);
  if (std::none_of(x.ops.begin(), x.ops.end(), runsThroughArena)) {
    const slimecclResult_t rc = runOps(x, deviceCopies);
    for (const OpRecord& op : x.ops) op.comm->recorder.finished(op, rc == slimecclSuccess, threadError());
    return rc;
  }
  const std::vector<OpRecord> whole = x.ops;
  const slimecclResult_t rc = runInChunks(whole, deviceCopies, [&](std::vector<OpRecord>& round) {
    x.clear();
    x.ops.assign(round.begin(), round.end());
    return runOps(x, deviceCopies);
  });
  endRounds(whole, rc);
  return rc;
}

// Waits for the send buffers still being produced, then drops the gates from the ops run here: a
// plan kept for the next call must not hold the producer (and its workspace) alive. The caller's
// ops keep them until the ops have ended.
slimecclResult_t awaitInputs(std::vector<OpRecord>& ops) {
  for (OpRecord& op : ops) {
    if (op.inputGate == nullptr) continue;
    if (const slimecclResult_t rc = op.inputGate->await(op.comm); rc != slimecclSuccess) {
      for (const OpRecord& unrun : ops) unrun.comm->recorder.finished(unrun, false, threadError());
      return rc;
    }
    op.inputGate.reset();
  }
  return slimecclSuccess;
}

}  // namespace

void sortForExecution(std::vector<OpRecord>& ops) {
  auto runsBefore = [](const OpRecord& a, const OpRecord& b) {
    if (a.isP2P() != b.isP2P()) return !a.isP2P();
    return !a.isP2P() && a.comm == b.comm && a.seq < b.seq;
  };
  // Calls usually come in order already; sorting anyway would allocate.
  if (!std::is_sorted(ops.begin(), ops.end(), runsBefore)) std::stable_sort(ops.begin(), ops.end(), runsBefore);
}

slimecclResult_t executeQueuedRounds(QueuedRounds& rounds) {
  ExecScratch& x = execScratch();
  const std::vector<OpRecord>& whole = rounds.ops();
  slimecclResult_t rc;
  try {
    rc = rounds.run([&](std::vector<OpRecord>& round) {
      x.clear();
      x.ops.assign(round.begin(), round.end());
      return runOps(x, CopyOrder::Unordered, true);
    });
    endRounds(whole, rc);
  } catch (const std::exception& e) {
    rc = failThrown(whole.data(), whole.size(), e);
  }
  x.clear();
  return rc;
}

slimecclResult_t executeOps(const std::vector<OpRecord>& requested, CopyOrder deviceCopies) {
  ExecScratch& x = execScratch();
  slimecclResult_t rc;
  try {
    x.ops.assign(requested.begin(), requested.end());
    rc = awaitInputs(x.ops);
    if (rc == slimecclSuccess) rc = executeScratch(x, deviceCopies);
  } catch (const std::exception& e) {
    rc = failThrown(requested.data(), requested.size(), e);
  }
  x.clear();
  return rc;
}

slimecclResult_t submitOp(OpRecord op) {
  slimecclComm* comm = op.comm;
  GroupState& group = openGroup();
  if (group.depth == 0 && takesHostTiers(op)) return allGatherInHostTiers(op);
  // Outside a group a rank's Send to itself would wait for a Recv it cannot post before the Send
  // returns (and the other way round).
  if (op.isP2P() && op.peer == comm->rank && group.depth == 0)
    return fail(slimecclInvalidUsage,
                "rank {}: {}: a rank's Send to itself and Recv from itself complete only together, inside one "
                "slimecclGroupStart/slimecclGroupEnd",
                comm->rank, describeOp(op));
  if (group.depth > 0 && group.streamOf(comm, op.stream) != op.stream)
    return fail(slimecclInvalidUsage,
                "rank {}: {}: the group already holds ops of this communicator on another stream; ops of one "
                "communicator in one group must use one stream",
                comm->rank, describeOp(op));
  uint64_t& next = op.coll == Coll::Send   ? comm->sendSeq[op.peer]
                   : op.coll == Coll::Recv ? comm->recvSeq[op.peer]
                                           : comm->collSeq;
  op.seq = next;
  next += sequenceNumbersOf(op);
  op.traceId = ++comm->nextTraceId;
  // The call's own count (the API's) covers an op that ends before the call returns.
  if (group.depth == 0 && op.stream == nullptr) {
    slimecclResult_t rc;
    if (op.isP2P() && runEagerP2P(std::span<OpRecord>(&op, 1), &rc)) return rc;
    if (runsAlone(op)) return runAlone(op);
  }
  // An op queued in a group holds its comm until the group runs it: the call's own count where it
  // has one (a later call on this thread, groupEnd, lets it go, so the comm outlives this call).
  if (group.depth == 0 || !takeCallCount(comm)) opStarted(comm);
  // An op that runs at once is recorded when it starts; a group's ops without a stream when the
  // group is dispatched (a sendrecv group that goes eager is recorded only when it ends).
  if (op.stream != nullptr) comm->recorder.queued(op);
  const slimecclStream_t stream = op.stream;
  group.ops.push_back(std::move(op));
  if (group.depth > 0) return slimecclSuccess;
  std::vector<OpRecord> ops = group.takeOps();
  const slimecclResult_t rc = dispatch(stream, ops);
  group.keepMemoryOf(ops);
  return rc;
}

size_t openGroupOpsOf(const slimecclComm* comm) {
  const std::vector<OpRecord>& ops = openGroup().ops;
  return static_cast<size_t>(
      std::count_if(ops.begin(), ops.end(), [&](const OpRecord& op) { return op.comm == comm; }));
}

void dropOpenGroupOps(slimecclComm* comm, const std::string& why) {
  std::vector<OpRecord>& ops = openGroup().ops;
  auto dropped = std::stable_partition(ops.begin(), ops.end(), [&](const OpRecord& op) { return op.comm != comm; });
  for (auto it = dropped; it != ops.end(); ++it) {
    comm->recorder.finished(*it, false, why);
    opFinished(comm);
  }
  ops.erase(dropped, ops.end());
  auto& streams = openGroup().streams;
  streams.erase(std::remove_if(streams.begin(), streams.end(), [&](const auto& entry) { return entry.first == comm; }),
                streams.end());
}

bool groupIsOpen() { return openGroup().depth > 0; }

slimecclResult_t groupStart() {
  ++openGroup().depth;
  return slimecclSuccess;
}

slimecclResult_t groupEnd() {
  GroupState& group = openGroup();
  if (group.depth == 0)
    return fail(slimecclInvalidUsage, "slimecclGroupEnd called without a matching slimecclGroupStart");
  if (--group.depth > 0) return slimecclSuccess;
  std::vector<OpRecord> ops = group.takeOps();
  const slimecclResult_t rc = dispatchGroup(ops);
  group.keepMemoryOf(ops);
  return rc;
}

}  // namespace slimeccl
