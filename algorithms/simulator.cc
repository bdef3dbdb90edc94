#include "algorithms/simulator.h"

#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <map>

namespace slimeccl {
namespace {

char* resolve(RankBuffers& b, const BufferRange& r, std::string* error) {
  std::vector<char>& v = r.buffer == BufferId::Send ? b.send : b.recv;
  if (r.offset + r.bytes > v.size()) {
    *error = fmt::format("range {}+{} exceeds the {} buffer of {} bytes", r.offset, r.bytes,
                         r.buffer == BufferId::Send ? "send" : "recv", v.size());
    return nullptr;
  }
  return v.data() + r.offset;
}

SimulationResult failure(std::string error) {
  SimulationResult r;
  r.ok = false;
  r.error = std::move(error);
  return r;
}

}  // namespace

SimulationResult simulate(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers) {
  const int n = static_cast<int>(schedules.size());
  SimulationResult result;
  result.bytesSent.assign(n, 0);
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> wires;  // (src, dst) -> messages in order
  std::vector<size_t> next(n, 0);
  std::vector<std::vector<bool>> done(n);
  for (int r = 0; r < n; ++r) done[r].assign(schedules[r].steps.size(), false);
  // Steps of one rank run in order, except that a send whose input has not arrived lets later
  // receives go first (the executor posts receives ahead the same way).
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      const auto& steps = schedules[r].steps;
      for (size_t i = next[r]; i < steps.size(); ++i) {
        if (done[r][i]) continue;
        const Step& st = steps[i];
        if (st.dependsOn >= 0 && !done[r][st.dependsOn]) continue;
        std::string error;
        if (st.kind == StepKind::Copy) {
          char* src = resolve(buffers[r], st.src, &error);
          char* dst = resolve(buffers[r], st.dst, &error);
          if (!error.empty()) return failure(fmt::format("rank {} step {}: {}", r, i, error));
          memmove(dst, src, st.src.bytes);
        } else if (st.kind == StepKind::Send) {
          if (st.peer < 0 || st.peer >= n) return failure(fmt::format("rank {} step {}: peer {} out of range", r, i, st.peer));
          char* src = resolve(buffers[r], st.src, &error);
          if (!error.empty()) return failure(fmt::format("rank {} step {}: {}", r, i, error));
          wires[{r, st.peer}].emplace_back(src, src + st.src.bytes);
          result.bytesSent[r] += st.src.bytes;
          ++result.messages;
        } else {
          auto& wire = wires[{st.peer, r}];
          if (wire.empty()) continue;
          char* dst = resolve(buffers[r], st.dst, &error);
          if (!error.empty()) return failure(fmt::format("rank {} step {}: {}", r, i, error));
          if (wire.front().size() != st.dst.bytes)
            return failure(fmt::format("rank {} step {}: message of {} bytes from {} for a receive of {}", r, i,
                                       wire.front().size(), st.peer, st.dst.bytes));
          memcpy(dst, wire.front().data(), st.dst.bytes);
          wire.pop_front();
        }
        done[r][i] = true;
        moved = true;
        while (next[r] < steps.size() && done[r][next[r]]) ++next[r];
      }
    }
  }
  for (int r = 0; r < n; ++r)
    if (next[r] != schedules[r].steps.size())
      return failure(fmt::format("deadlock: rank {} is stuck at step {}", r, next[r]));
  for (const auto& [pair, wire] : wires)
    if (!wire.empty())
      return failure(fmt::format("{} message(s) from {} to {} were never received", wire.size(), pair.first, pair.second));
  return result;
}

}  // namespace slimeccl
