#include "src/debug/flight_recorder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "src/comm.h"
#include "src/exec/plan.h"
#include "src/param.h"
#include "src/sys/time.h"

namespace slimeccl {
namespace {

size_t capacity() {
  static const size_t ops = static_cast<size_t>(std::max<int64_t>(1, envInt("SLIMECCL_FLIGHT_RECORDER_OPS", 64)));
  return ops;
}

const char* stateName(OpState s) {
  switch (s) {
    case OpState::Queued: return "queued";
    case OpState::Running: return "running";
    case OpState::Done: return "done";
    case OpState::Failed: return "failed";
  }
  return "?";
}

std::string waitingOn(const OpPlan& plan) {
  std::string waits = describeWaits(plan);
  return waits.empty() ? "making connections" : "waiting on " + waits;
}

// Times come from the coarse clock (scheduler-tick resolution, a few ms): reading it costs a few
// ns where the precise one costs tens, on every op. Stuck ops, what the recorder is for, take seconds.
std::string seconds(int64_t ns) { return fmt::format("{:.3f} s", ns / 1e9); }

struct Registry {
  std::mutex mutex;
  std::set<slimecclComm_t> comms;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

FlightEntry* FlightRecorder::find(uint64_t traceId) {
  // Trace ids count a comm's calls one by one, so an op's entry is usually where its id points.
  if (ring_.empty()) return nullptr;
  FlightEntry& likely = ring_[(traceId - 1) % ring_.size()];
  if (likely.op.traceId == traceId) return &likely;
  for (size_t back = 1; back <= held(); ++back) {
    FlightEntry& e = ring_[(recorded_ - back) % ring_.size()];
    if (e.op.traceId == traceId) return &e;
  }
  return nullptr;
}

FlightEntry& FlightRecorder::record(const OpRecord& op) {
  if (ring_.empty()) ring_.resize(capacity());
  FlightEntry& e = ring_[recorded_++ % ring_.size()];
  e = FlightEntry{};
  e.op = op;
  e.queuedNs = coarseNowNs();
  return e;
}

void FlightRecorder::queued(OpRecord& op) {
  if (op.recorded) return;
  std::lock_guard<std::mutex> lock(mutex_);
  record(op);
  op.recorded = true;
}

void FlightRecorder::running(const OpRecord& op, const OpPlan* plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  // An op that was not queued is not there: no search (it would scan the whole ring).
  FlightEntry* e = op.recorded ? find(op.traceId) : nullptr;
  if (e != nullptr) {
    e->startNs = coarseNowNs();
  } else {
    e = &record(op);
    e->startNs = e->queuedNs;
  }
  e->state = OpState::Running;
  e->live = plan;
}

void FlightRecorder::finished(const OpRecord& op, bool ok, const std::string& failure) {
  std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry* e = find(op.traceId);
  if (e == nullptr) {
    // It failed before it could start (copying its buffers from the GPU).
    e = &record(op);
    e->startNs = e->queuedNs;
  }
  e->state = ok ? OpState::Done : OpState::Failed;
  e->endNs = coarseNowNs();
  e->live = nullptr;
  if (!ok) e->failure = failure;
}

std::string FlightRecorder::dump(int rank, int nranks, const std::string& commName) const {
  std::lock_guard<std::mutex> lock(mutex_);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string out = fmt::format("slimeccl flight recorder: {}:{} rank {} of {}, comm '{}', last {} ops\n", host,
                                getpid(), rank, nranks, commName, held());
  int64_t now = coarseNowNs();
  for (size_t back = held(); back >= 1; --back) {
    const FlightEntry& e = ring_[(recorded_ - back) % ring_.size()];
    std::string when;
    std::string detail;
    switch (e.state) {
      case OpState::Queued: when = "queued " + seconds(now - e.queuedNs) + " ago"; break;
      case OpState::Running:
        when = "running for " + seconds(now - e.startNs);
        if (e.live != nullptr) detail = waitingOn(*e.live);
        break;
      case OpState::Done: when = "took " + seconds(e.endNs - e.startNs); break;
      case OpState::Failed:
        when = "failed after " + seconds(e.endNs - e.startNs);
        detail = e.failure;
        break;
    }
    out += fmt::format("  {:<8} {}: {}{}{}\n", stateName(e.state), describeOp(e.op), when, detail.empty() ? "" : ": ",
                       detail);
  }
  return out;
}

void registerForDumps(slimecclComm_t comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().comms.insert(comm);
}

void unregisterFromDumps(slimecclComm_t comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().comms.erase(comm);
}

void dumpAllCommunicators() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  for (slimecclComm_t comm : registry().comms) {
    std::string text = comm->recorder.dump(comm->rank, comm->nranks, comm->name);
    fwrite(text.data(), 1, text.size(), stderr);
  }
  fflush(stderr);
}

}  // namespace slimeccl
