#include "src/stream.h"

#include "src/comm.h"
#include "src/error.h"
#include "src/exec/submit.h"
#include "src/log.h"
#include "topo/numa_binding.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

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

void workerLoop(slimecclStream* s) {
  bindToHomeNode();
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [s] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) return;
    std::vector<OpRecord> ops = std::move(s->queue.front());
    s->queue.pop_front();
    s->running = true;
    lock.unlock();
    slimecclResult_t rc = executeOps(ops);
    std::string text = rc == slimecclSuccess ? std::string() : threadError();
    for (const OpRecord& op : ops) {
      if (rc != slimecclSuccess) commSetLastError(op.comm, text);
      opFinished(op.comm);
    }
    lock.lock();
    if (rc != slimecclSuccess && s->error == slimecclSuccess) {
      s->error = rc;
      s->errorText = text;
    }
    s->running = false;
    if (s->queue.empty()) s->drained.notify_all();
  }
}

}  // namespace

slimecclResult_t streamCreate(slimecclStream** out) {
  auto* s = new slimecclStream();
  s->magic = kStreamMagic;
  s->worker = std::thread(workerLoop, s);
  *out = s;
  return slimecclSuccess;
}

slimecclResult_t streamEnqueue(slimecclStream* s, std::vector<OpRecord> ops) {
  std::lock_guard<std::mutex> lock(s->mutex);
  s->queue.push_back(std::move(ops));
  s->wake.notify_one();
  return slimecclSuccess;
}

slimecclResult_t streamSynchronize(slimecclStream* s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  s->drained.wait(lock, [s] { return s->queue.empty() && !s->running; });
  // Errors stay on the stream (as CUDA's do): a later query or synchronize still reports them.
  if (s->error != slimecclSuccess) return setError(s->error, s->errorText);
  return slimecclSuccess;
}

slimecclResult_t streamQuery(slimecclStream* s) {
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->queue.empty() || s->running) return slimecclInProgress;
  if (s->error != slimecclSuccess) return setError(s->error, s->errorText);
  return slimecclSuccess;
}

void streamDestroy(slimecclStream* s) {
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->stopping = true;
    s->wake.notify_one();
  }
  s->worker.join();
  s->magic = 0;
  delete s;
}

}  // namespace slimeccl
