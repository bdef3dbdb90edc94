#include "tests/algorithms/algo_test_support_a.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "src/op.h"

namespace slimeccl::algotest {
namespace {

bool isTransfer(StepKind kind) {
  return kind == StepKind::Send || kind == StepKind::Recv || kind == StepKind::RecvReduce;
}
bool isReceive(StepKind kind) { return kind == StepKind::Recv || kind == StepKind::RecvReduce; }
bool isLocal(StepKind kind) { return !isTransfer(kind); }
size_t transferBytes(const Step& step) { return step.kind == StepKind::Send ? step.src.bytes : step.dst.bytes; }

std::string describeStep(const Step& step, int index) {
  std::string text = describeSchedule(Schedule{{step}, 0});
  text = text.substr(text.find(": ") + 2);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return fmt::format("step {} ({})", index, text);
}

struct Access {
  BufferRange range;
  bool writes;
};

std::vector<Access> accessesOf(const Step& step) {
  switch (step.kind) {
    case StepKind::Send: return {{step.src, false}};
    case StepKind::Recv:
    case StepKind::Scale: return {{step.dst, true}};
    default: return {{step.src, false}, {step.dst, true}};  // RecvReduce, Copy, Reduce
  }
}

bool referencesSendBuffer(const Step& step) {
  for (const Access& access : accessesOf(step))
    if (access.range.buffer == BufferId::Send) return true;
  return false;
}

bool overlap(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

// Sets of steps as rows of bits, one row per step.
class StepRelation {
 public:
  explicit StepRelation(size_t n) : words_((n + 63) / 64), bits_(n * words_, 0) {}
  void add(size_t row, size_t step) { bits_[row * words_ + step / 64] |= uint64_t{1} << (step % 64); }
  bool has(size_t row, size_t step) const { return (bits_[row * words_ + step / 64] >> (step % 64)) & 1; }
  void addRow(size_t row, const StepRelation& other, size_t otherRow) {
    for (size_t w = 0; w < words_; ++w) bits_[row * words_ + w] |= other.bits_[otherRow * words_ + w];
  }
  void removeRow(size_t row, const StepRelation& other, size_t otherRow) {
    for (size_t w = 0; w < words_; ++w) bits_[row * words_ + w] &= ~other.bits_[otherRow * words_ + w];
  }

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
};

// The order the executor guarantees between the steps of one schedule. Every relation runs
// from an earlier step to a later one, so one pass in list order builds their closures.
class StepOrder {
 public:
  explicit StepOrder(const Schedule& schedule)
      : whollyBefore_(schedule.steps.size()), chunkBefore_(schedule.steps.size()),
        completesBefore_(schedule.steps.size()) {
    const std::vector<Step>& steps = schedule.steps;
    int previousLocal = -1;
    std::map<int, int> previousReceiveFrom;
    for (size_t j = 0; j < steps.size(); ++j) {
      const Step& step = steps[j];
      if (step.dependsOn >= 0) follow(j, step.dependsOn, chunkwise(steps[step.dependsOn], step));
      if (isLocal(step.kind)) {
        if (previousLocal >= 0) follow(j, previousLocal, false);
        previousLocal = static_cast<int>(j);
      }
      // Receives from one peer complete in list order: messages arrive in order.
      if (isReceive(step.kind)) {
        auto previous = previousReceiveFrom.find(step.peer);
        if (previous != previousReceiveFrom.end()) {
          completesBefore_.add(j, previous->second);
          completesBefore_.addRow(j, completesBefore_, previous->second);
        }
        previousReceiveFrom[step.peer] = static_cast<int>(j);
      }
      chunkBefore_.removeRow(j, whollyBefore_, j);
    }
  }

  // Every chunk of `later` starts after all of `earlier` is complete.
  bool whollyBefore(int earlier, int later) const { return whollyBefore_.has(later, earlier); }
  // Chunk c of `later` starts after chunk c of `earlier` is complete.
  bool chunkBefore(int earlier, int later) const { return chunkBefore_.has(later, earlier); }
  // `later` completes only after `earlier` has.
  bool completesBefore(int earlier, int later) const { return completesBefore_.has(later, earlier); }

 private:
  // The executor orders a transfer after a transfer chunk by chunk when both have as many chunks,
  // which some chunk size achieves unless one is at least twice the other (then both have one
  // chunk when they have as many).
  static bool chunkwise(const Step& dependency, const Step& step) {
    if (!isTransfer(dependency.kind) || !isTransfer(step.kind)) return false;
    const size_t a = transferBytes(dependency), b = transferBytes(step);
    return std::max(a, b) < 2 * std::min(a, b);
  }

  void follow(size_t step, int predecessor, bool byChunk) {
    // Whatever wholly precedes the predecessor wholly precedes the step. What precedes the
    // predecessor chunk by chunk precedes the step chunk by chunk through a chunkwise link, and
    // wholly through a whole one (the predecessor's last chunk waited for the other's last).
    whollyBefore_.addRow(step, whollyBefore_, predecessor);
    if (byChunk) {
      chunkBefore_.add(step, predecessor);
      chunkBefore_.addRow(step, chunkBefore_, predecessor);
    } else {
      whollyBefore_.add(step, predecessor);
      whollyBefore_.addRow(step, chunkBefore_, predecessor);
    }
    completesBefore_.add(step, predecessor);
    completesBefore_.addRow(step, completesBefore_, predecessor);
  }

  StepRelation whollyBefore_, chunkBefore_, completesBefore_;
};

// A chunkwise order protects the bytes two transfers share when the earlier one's range starts
// at or after the later one's: the shared bytes then fall in a chunk of the earlier step with an
// index no higher than in the later step, whatever the chunk size.
bool ordered(const StepOrder& order, int earlier, const Access& first, int later, const Access& second) {
  if (order.whollyBefore(earlier, later)) return true;
  return order.chunkBefore(earlier, later) && first.range.offset >= second.range.offset;
}

std::string findUnorderedConflict(const Schedule& schedule, const StepOrder& order) {
  struct Touch {
    Access access;
    int step;
  };
  std::vector<Touch> touches;
  for (size_t i = 0; i < schedule.steps.size(); ++i)
    for (const Access& access : accessesOf(schedule.steps[i]))
      if (access.range.bytes > 0) touches.push_back(Touch{access, static_cast<int>(i)});
  // Sorted by where they start, the ranges overlapping a range follow it until one starts past its end.
  std::sort(touches.begin(), touches.end(), [](const Touch& a, const Touch& b) {
    return std::tie(a.access.range.buffer, a.access.range.offset) <
           std::tie(b.access.range.buffer, b.access.range.offset);
  });
  for (size_t x = 0; x < touches.size(); ++x)
    for (size_t y = x + 1; y < touches.size() && overlap(touches[x].access.range, touches[y].access.range); ++y) {
      const Touch& a = touches[x].step < touches[y].step ? touches[x] : touches[y];
      const Touch& b = touches[x].step < touches[y].step ? touches[y] : touches[x];
      if (a.step == b.step || !(a.access.writes || b.access.writes) ||
          ordered(order, a.step, a.access, b.step, b.access))
        continue;
      return fmt::format("{} and {} touch the same bytes and no dependency orders them",
                         describeStep(schedule.steps[a.step], a.step), describeStep(schedule.steps[b.step], b.step));
    }
  return "";
}

std::string findSendsReadyOutOfOrder(const Schedule& schedule, const StepOrder& order) {
  const std::vector<Step>& steps = schedule.steps;
  std::map<int, int> previousSendTo;
  for (size_t b = 0; b < steps.size(); ++b) {
    if (steps[b].kind != StepKind::Send) continue;
    auto previous = previousSendTo.find(steps[b].peer);
    const int a = previous == previousSendTo.end() ? -1 : previous->second;
    previousSendTo[steps[b].peer] = static_cast<int>(b);
    if (a < 0) continue;
    const int waitsA = steps[a].dependsOn, waitsB = steps[b].dependsOn;
    // b must not be ready while a is not: what b waits for completes only after a, or after
    // what a waits for.
    const bool inOrder =
        waitsA < 0 || (waitsB >= 0 && (waitsB == a || waitsB == waitsA || order.completesBefore(a, waitsB) ||
                                       order.completesBefore(waitsA, waitsB)));
    if (!inOrder)
      return fmt::format("{} can be ready before {}, an earlier send to the same peer",
                         describeStep(steps[b], static_cast<int>(b)), describeStep(steps[a], a));
  }
  return "";
}

// (peer, position among the messages with that peer in one direction, bytes)
using Message = std::tuple<int, int, size_t>;

std::vector<Message> messagesOf(const Schedule& schedule, bool sent, int nranks) {
  std::vector<Message> messages;
  std::vector<int> countWith(nranks, 0);
  for (const Step& step : schedule.steps)
    if ((sent ? step.kind == StepKind::Send : isReceive(step.kind)) && step.peer >= 0 && step.peer < nranks)
      messages.emplace_back(step.peer, countWith[step.peer]++, transferBytes(step));
  std::sort(messages.begin(), messages.end());
  return messages;
}

// Message k from a to b is the k-th send of a to b and the k-th receive of b from a.
std::string findUnmatchedMessage(const std::vector<Schedule>& schedules) {
  const int n = static_cast<int>(schedules.size());
  std::vector<std::vector<Message>> sends(n), receives(n);
  for (int r = 0; r < n; ++r) {
    sends[r] = messagesOf(schedules[r], true, n);
    receives[r] = messagesOf(schedules[r], false, n);
  }
  for (int from = 0; from < n; ++from) {
    for (const auto& [to, k, bytes] : sends[from]) {
      auto it = std::lower_bound(receives[to].begin(), receives[to].end(), Message{from, k, 0});
      if (it == receives[to].end() || std::get<0>(*it) != from || std::get<1>(*it) != k)
        return fmt::format("rank {} sends message {} to rank {}, which does not receive it", from, k, to);
      if (std::get<2>(*it) != bytes)
        return fmt::format("rank {} sends message {} to rank {} with {} bytes; rank {} receives {}", from, k, to, bytes,
                           to, std::get<2>(*it));
    }
    for (const auto& [peer, k, bytes] : receives[from]) {
      auto it = std::lower_bound(sends[peer].begin(), sends[peer].end(), Message{from, k, 0});
      if (it == sends[peer].end() || std::get<0>(*it) != from || std::get<1>(*it) != k)
        return fmt::format("rank {} receives message {} from rank {}, which does not send it", from, k, peer);
    }
  }
  return "";
}

std::string findStepViolation(const Schedule& schedule, int rank, int nranks, bool hasSendBuffer) {
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& step = schedule.steps[i];
    const std::string where = fmt::format("rank {} {}", rank, describeStep(step, static_cast<int>(i)));
    if (isTransfer(step.kind) && transferBytes(step) == 0) return where + ": moves zero bytes";
    if (isTransfer(step.kind) && (step.peer < 0 || step.peer >= nranks || step.peer == rank))
      return where + ": bad peer";
    if (step.dependsOn >= static_cast<int>(i)) return where + ": depends on a later step";
    if (!hasSendBuffer && referencesSendBuffer(step)) return where + ": this rank has no Send buffer";
  }
  return "";
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<int> ranksUpTo64() {
  std::vector<int> counts;
  for (int n = 1; n <= 64; ++n) counts.push_back(n);
  return counts;
}

std::vector<int> largeRankCounts(int atMost) {
  std::vector<int> counts;
  for (int n : {100, 127, 128, 255, 256, 1000, 1024})
    if (n <= atMost) counts.push_back(n);
  return counts;
}

char patternByte(int source, int block, size_t i) {
  return static_cast<char>(mix((static_cast<uint64_t>(source) << 42) ^ (static_cast<uint64_t>(block) << 21) ^ i) &
                           0xff);
}

std::vector<char> patternBlock(int source, int block, size_t blockBytes) {
  std::vector<char> bytes(blockBytes);
  for (size_t i = 0; i < blockBytes; ++i) bytes[i] = patternByte(source, block, i);
  return bytes;
}

std::string firstDifference(const std::vector<char>& expected, const std::vector<char>& actual, size_t blockBytes) {
  if (actual.size() != expected.size())
    return fmt::format("{} bytes where {} were expected", actual.size(), expected.size());
  auto wrong = std::mismatch(expected.begin(), expected.end(), actual.begin());
  if (wrong.first == expected.end()) return "";
  const size_t at = static_cast<size_t>(wrong.first - expected.begin());
  if (blockBytes == 0) return fmt::format("byte {}", at);
  return fmt::format("byte {} (block {} of {} bytes)", at, at / blockBytes, blockBytes);
}

ScheduleRequest makeRequest(Coll coll, Algo algo, int nranks, size_t count, size_t typeBytes) {
  ScheduleRequest request{
      .coll = coll, .algo = algo, .count = count, .typeBytes = typeBytes, .nranks = nranks, .rank = 0};
  return request;
}

std::string describeRequest(const ScheduleRequest& r) {
  std::string text = fmt::format("{} {} nranks={} count={} typeBytes={}{}", collName(r.coll), algoName(r.algo),
                                 r.nranks, r.count, r.typeBytes, r.inPlace ? " in-place" : "");
  if (r.coll == Coll::Broadcast) text += fmt::format(" root={}", r.root);
  if (r.topology != nullptr) text += fmt::format(" hosts={}", r.topology->hostCount());
  return text;
}

std::vector<int> ranksToCheckOrder(int nranks, int root) {
  if (nranks <= 64) {
    std::vector<int> all;
    for (int r = 0; r < nranks; ++r) all.push_back(r);
    return all;
  }
  std::set<int> sample{0, 1, nranks / 2, nranks - 1, root};
  return {sample.begin(), sample.end()};
}

std::string findRuleViolation(const std::vector<Schedule>& schedules, const std::vector<RankBuffers>& buffers,
                              const std::vector<int>& orderChecked) {
  const int n = static_cast<int>(schedules.size());
  for (int r = 0; r < n; ++r) {
    std::string violation = findStepViolation(schedules[r], r, n, !buffers[r].send.empty());
    if (!violation.empty()) return violation;
  }
  std::string violation = findUnmatchedMessage(schedules);
  if (!violation.empty()) return violation;
  for (int r : orderChecked) {
    const StepOrder order(schedules[r]);
    violation = findUnorderedConflict(schedules[r], order);
    if (violation.empty()) violation = findSendsReadyOutOfOrder(schedules[r], order);
    if (!violation.empty()) return fmt::format("rank {}: {}", r, violation);
  }
  return "";
}

std::string buildCheckAndSimulate(ScheduleRequest request, std::vector<RankBuffers>& buffers,
                                  SimulationResult* result) {
  std::vector<Schedule> schedules;
  for (int r = 0; r < request.nranks; ++r) {
    request.rank = r;
    schedules.push_back(buildCollective(request));
  }
  std::string violation = findRuleViolation(schedules, buffers, ranksToCheckOrder(request.nranks, request.root));
  if (!violation.empty()) return violation;
  *result = simulate(schedules, buffers);
  return result->ok ? "" : result->error;
}

}  // namespace slimeccl::algotest
