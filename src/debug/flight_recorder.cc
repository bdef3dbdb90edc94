#include "src/debug/flight_recorder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>

#include "src/comm.h"
#include "src/exec/plan.h"
#include "src/base/param.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

// Each op kept costs a record of about 200 bytes per communicator.
constexpr int64_t kMaxRecordedOps = 1 << 16;

size_t capacity() {
  static const size_t ops = static_cast<size_t>(envInt("SLIMECCL_FLIGHT_RECORDER_OPS", 64, 1, kMaxRecordedOps));
  return ops;
}

const char* stateName(OpState s) {
  switch (s) {
    case OpState::Queued: return "queued";
    case OpState::Running: return "running";
    case OpState::Done: return "done";
    case OpState::Failed: return "failed";
    case OpState::OnGpu: return "on GPU";
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

FlightEntry* FlightRecorder::find(const OpRecord& op) {
  if (op.recordedAs == 0 || ring_.empty()) return nullptr;
  // Later ops may have taken the entry over (a stream's queue ran ahead of the ring).
  FlightEntry& e = ring_[op.recordedAs - 1];
  return e.op.traceId == op.traceId ? &e : nullptr;
}

std::string FlightOp::describe() const {
  return describeOp(OpRecord{coll, nullptr, nullptr, nullptr, count, type, slimecclSum, -1, peer, seq, nullptr});
}

FlightEntry& FlightRecorder::record(const OpRecord& op, int64_t nowNs) {
  if (ring_.empty()) ring_.resize(capacity());
  // The next entry in turn, without a division: every op touches the recorder at least twice.
  FlightEntry& e = ring_[next_];
  e.op = FlightOp{op.coll, op.type, op.peer, op.count, op.seq, op.traceId};
  next_ = next_ + 1 == ring_.size() ? 0 : next_ + 1;
  ++recorded_;
  e.state = OpState::Queued;
  e.queuedNs = nowNs;
  e.startNs = e.endNs = 0;
  e.live = nullptr;
  e.failure.clear();
  return e;
}

FlightEntry& FlightRecorder::recordNoted(OpRecord& op, int64_t nowNs) {
  FlightEntry& e = record(op, nowNs);
  op.recordedAs = static_cast<uint64_t>(&e - ring_.data()) + 1;
  return e;
}

void FlightRecorder::queued(OpRecord& op) {
  if (op.recordedAs != 0) return;
  std::lock_guard<SpinLock> hold(lock_);
  recordNoted(op, coarseNowNs());
}

void FlightRecorder::running(OpRecord& op, const OpPlan* plan) {
  std::lock_guard<SpinLock> hold(lock_);
  FlightEntry* e = find(op);
  if (e != nullptr) {
    e->startNs = coarseNowNs();
  } else {
    e = &recordNoted(op, coarseNowNs());
    e->startNs = e->queuedNs;
  }
  e->state = OpState::Running;
  e->live = plan;
}

void FlightRecorder::finishLocked(const OpRecord& op, OpState state, const std::string& failure, int64_t nowNs) {
  FlightEntry* e = find(op);
  if (e == nullptr) {
    // It failed before it could start (copying its buffers from the GPU), or ran at once.
    e = &record(op, nowNs);
    e->startNs = e->queuedNs;
  }
  // An op that ends without having run on the host (queued on the GPU, or refused while it waited)
  // is timed from when it was queued.
  if (e->startNs == 0) e->startNs = e->queuedNs;
  e->state = state;
  e->endNs = nowNs;
  e->live = nullptr;
  if (state == OpState::Failed) e->failure = failure;
}

void FlightRecorder::finished(const OpRecord& op, bool ok, const std::string& failure) {
  std::lock_guard<SpinLock> hold(lock_);
  finishLocked(op, ok ? OpState::Done : OpState::Failed, failure, coarseNowNs());
}

void FlightRecorder::finished(std::span<const OpRecord> ops, bool ok, const std::string& failure) {
  std::lock_guard<SpinLock> hold(lock_);
  const int64_t now = coarseNowNs();
  for (const OpRecord& op : ops) finishLocked(op, ok ? OpState::Done : OpState::Failed, failure, now);
}

void FlightRecorder::handedToGpu(const OpRecord& op) {
  std::lock_guard<SpinLock> hold(lock_);
  finishLocked(op, OpState::OnGpu, std::string(), coarseNowNs());
}

std::string FlightRecorder::dump(int rank, int nranks, const std::string& commName) const {
  std::lock_guard<SpinLock> hold(lock_);
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
        if (e.live != nullptr)
          detail = waitingOn(*e.live);
        else if (isPointToPoint(e.op.coll))
          detail = fmt::format("waiting on peer {} (one eager message)", e.op.peer);
        break;
      case OpState::Done: when = "took " + seconds(e.endNs - e.startNs); break;
      case OpState::OnGpu: when = "queued on its CUDA stream " + seconds(now - e.endNs) + " ago"; break;
      case OpState::Failed:
        when = "failed after " + seconds(e.endNs - e.startNs);
        detail = e.failure;
        break;
    }
    out += fmt::format("  {:<8} {}: {}{}{}\n", stateName(e.state), e.op.describe(), when, detail.empty() ? "" : ": ",
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
