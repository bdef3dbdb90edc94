#include "src/stream.h"

#include <pthread.h>

#include <shared_mutex>
#include <unordered_set>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/exec/submit.h"
#include "src/base/log.h"
#include "topo/numa_binding.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

// Every stream between its creation and its destruction: a handle is looked up here before it is
// read, so a stale, tiny (cudaStreamPerThread is 0x2) or foreign value is refused, not followed.
struct LiveStreams {
  std::shared_mutex mutex;
  std::unordered_set<const slimecclStream*> streams;
};

LiveStreams*& liveSlot() {
  static LiveStreams* live = new LiveStreams();  // never freed: streams outlive statics
  return live;
}

// A forked child has none of the streams' worker threads: it starts with no live streams. Only
// the forking thread lives on there, so the inherited registry (whose mutex a parent's thread may
// hold) is left as it is.
void forgetStreamsInChild() { liveSlot() = new LiveStreams(); }

LiveStreams& live() {
  static const bool hooked = pthread_atfork(nullptr, nullptr, forgetStreamsInChild) == 0;
  (void)hooked;
  return *liveSlot();
}

// The worker drains the rank's incoming shm FIFOs, which live on its home node (net/shm); running
// on that node's CPUs keeps those reads local. An unbound worker still works, so failure only warns.
void bindToHomeNode() {
  int node = homeNumaNodeToUse();
  if (node < 0) return;
  if (bindThreadToNumaNode(node) != slimecclSuccess) {
    SLIMECCL_WARN(kLogInit, -1, "stream worker runs unbound: {}", threadError());
    clearThreadError();
  }
}

// Ops that will not run: the thread's error gets the first op's name in front, and every call
// ends with it. Returns the sentence.
std::string endUnrun(const std::vector<OpRecord>& ops, slimecclResult_t rc) {
  const OpRecord& first = ops.front();
  prefixThreadError(fmt::format("rank {}: {}: ", first.comm->rank, describeOp(first)));
  const std::string text = threadError();
  for (const OpRecord& op : ops) {
    op.comm->recorder.finished(op, false, text);
    commFail(op.comm, rc, text);
  }
  return text;
}

slimecclResult_t runGroup(slimecclStream* s, QueuedGroup& group, std::string* text) {
  const slimecclResult_t rc =
      s->cuda ? executeQueuedRounds(*group.rounds) : executeOps(group.ops, CopyOrder::AfterLegacyStream);
  if (rc != slimecclSuccess) *text = threadError();
  return rc;
}

// What the worker does after a group ran (or the caller, after a group it ran itself).
void endGroup(slimecclStream* s, const std::vector<OpRecord>& ops, slimecclResult_t rc, const std::string& text) {
  for (const OpRecord& op : ops) {
    if (rc != slimecclSuccess) commSetLastError(op.comm, text);
    opFinished(op.comm);
  }
  std::lock_guard<std::mutex> lock(s->mutex);
  if (rc != slimecclSuccess && s->error == slimecclSuccess) {
    s->error = rc;
    s->errorText = text;
  }
}

void workerLoop(slimecclStream* s) {
  bindToHomeNode();
  // The worker's copies and waits are all on the stream's GPU.
  if (s->cuda) keepDevice(s->cuda->device());
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [s] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) return;
    QueuedGroup group = std::move(s->queue.front());
    s->queue.pop_front();
    s->running = true;
    lock.unlock();
    std::string text;
    const slimecclResult_t rc = runGroup(s, group, &text);
    endGroup(s, group.opsOf(), rc, text);
    lock.lock();
    s->running = false;
    if (s->queue.empty()) s->drained.notify_all();
  }
}

slimecclStream* startStream(std::unique_ptr<CudaStreamBinding> cuda) {
  auto* s = new slimecclStream();
  s->cuda = std::move(cuda);
  s->worker = std::thread(workerLoop, s);
  LiveStreams& registry = live();
  std::unique_lock<std::shared_mutex> lock(registry.mutex);
  registry.streams.insert(s);
  return s;
}

}  // namespace

slimecclResult_t streamCreate(slimecclStream** out) {
  *out = startStream(nullptr);
  return slimecclSuccess;
}

slimecclResult_t streamCreateFromCuda(void* cudaStream, slimecclStream** out) {
  std::unique_ptr<CudaStreamBinding> cuda;
  SLIMECCL_CHECK(CudaStreamBinding::create(cudaStream, &cuda));
  *out = startStream(std::move(cuda));
  return slimecclSuccess;
}

slimecclResult_t streamEnqueue(slimecclStream* s, std::vector<OpRecord> ops) {
  QueuedGroup group;
  group.ops = std::move(ops);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->queue.push_back(std::move(group));
  s->wake.notify_one();
  return slimecclSuccess;
}

slimecclResult_t streamEnqueueCuda(slimecclStream* s, std::vector<OpRecord>& ops, bool* queued) {
  QueuedGroup group;
  // Groups reach the queue in the order of their places in the CUDA stream.
  std::lock_guard<std::mutex> enqueueing(s->enqueueMutex);
  sortForExecution(ops);
  const slimecclResult_t rc = QueuedRounds::queue(ops, *s->cuda, &group.rounds);
  *queued = group.rounds != nullptr;
  if (!*queued) return rc;
  // Where queuing failed part way, the worker still releases what the stream waits for, in turn.
  std::lock_guard<std::mutex> lock(s->mutex);
  s->queue.push_back(std::move(group));
  s->wake.notify_one();
  return rc;
}

slimecclResult_t streamsRunHere(std::vector<std::pair<slimecclStream*, std::vector<OpRecord>>>& parts) {
  slimecclResult_t rc = slimecclSuccess;
  for (auto& [s, ops] : parts) {
    std::unique_lock<std::mutex> lock(s->mutex);
    s->drained.wait(lock, [s = s] { return s->queue.empty() && !s->running; });
    s->running = true;
  }
  for (auto& [s, ops] : parts)
    if (rc == slimecclSuccess) rc = s->cuda->synchronize();
  std::vector<OpRecord> all;
  for (auto& [s, ops] : parts) all.insert(all.end(), ops.begin(), ops.end());
  if (rc != slimecclSuccess)
    endUnrun(all, rc);
  else
    rc = executeOps(all, CopyOrder::Unordered);
  const std::string text = rc != slimecclSuccess ? threadError() : std::string();
  for (auto& [s, ops] : parts) {
    endGroup(s, ops, rc, text);
    std::lock_guard<std::mutex> lock(s->mutex);
    s->running = false;
    if (s->queue.empty()) s->drained.notify_all();
  }
  return rc;
}

slimecclResult_t streamSynchronize(slimecclStream* s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  s->drained.wait(lock, [s] { return s->queue.empty() && !s->running; });
  if (s->cuda) {
    // Unlocked: the CUDA stream may hold a group queued meanwhile, which the worker must run.
    lock.unlock();
    SLIMECCL_CHECK(s->cuda->synchronize());
    lock.lock();
  }
  // Errors stay on the stream (as CUDA's do): a later query or synchronize still reports them.
  if (s->error != slimecclSuccess) return setError(s->error, s->errorText);
  return slimecclSuccess;
}

slimecclResult_t streamQuery(slimecclStream* s) {
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->queue.empty() || s->running || (s->cuda && !s->cuda->idle())) return slimecclInProgress;
  if (s->error != slimecclSuccess) return setError(s->error, s->errorText);
  return slimecclSuccess;
}

bool streamIsLive(const slimecclStream* s) {
  LiveStreams& registry = live();
  std::shared_lock<std::shared_mutex> lock(registry.mutex);
  return registry.streams.count(s) != 0;
}

void streamDestroy(slimecclStream* s) {
  {
    LiveStreams& registry = live();
    std::unique_lock<std::shared_mutex> lock(registry.mutex);
    registry.streams.erase(s);
  }
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->stopping = true;
    s->wake.notify_one();
  }
  s->worker.join();
  s->cuda.reset();
  delete s;
}

}  // namespace slimeccl
