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

std::string seconds(int64_t ns) { return ns < 1000000 ? fmt::format("{} us", ns / 1000) : fmt::format("{:.3f} s", ns / 1e9); }

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
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->op.traceId == traceId) return &*it;
  return nullptr;
}

void FlightRecorder::queued(const OpRecord& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= capacity()) entries_.pop_front();
  FlightEntry e;
  e.op = op;
  e.queuedNs = nowNs();
  entries_.push_back(e);
}

void FlightRecorder::running(const OpRecord& op, const OpPlan* plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightEntry* e = find(op.traceId)) {
    e->state = OpState::Running;
    e->startNs = nowNs();
    e->live = plan;
  }
}

void FlightRecorder::finished(const OpRecord& op, bool ok, const std::string& failure) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightEntry* e = find(op.traceId)) {
    e->state = ok ? OpState::Done : OpState::Failed;
    e->endNs = nowNs();
    e->live = nullptr;
    e->failure = failure;
  }
}

std::string FlightRecorder::dump(int rank, int nranks, const std::string& commName) const {
  std::lock_guard<std::mutex> lock(mutex_);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string out = fmt::format("slimeccl flight recorder: {}:{} rank {} of {}, comm '{}', last {} ops\n", host,
                                getpid(), rank, nranks, commName, entries_.size());
  int64_t now = nowNs();
  for (const FlightEntry& e : entries_) {
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
