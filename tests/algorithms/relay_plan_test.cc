// The relay plans (algorithms/relay_plan.h), run by their simulator on host memory: every op at rank
// counts from 1 to 8, counts around the slots' size and past several rounds of slots, in and out
// of place, each in several orders of the streams' turns, against results computed without the
// plans; and the simulator itself catches plans that reuse a slot early, wait for each other, or
// overwrite bytes a Put has yet to read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/relay_plan.h"
#include "algorithms/relay_simulator.h"
#include "tests/algorithms/algo_test_support_b.h"

namespace slimeccl {
namespace {

using reductiontest::allOps;
using reductiontest::allTypes;
using reductiontest::encode;
using reductiontest::expectedElement;
using reductiontest::inputValue;
using reductiontest::show;

struct Case {
  Coll coll;
  int nranks;
  size_t count;
  bool inPlace = false;
  int root = 0;
  size_t slotBytes = 48;
  slimecclDataType_t type = slimecclInt32;
  slimecclRedOp_t op = slimecclSum;
};

std::string describe(const Case& c) {
  return std::string(collName(c.coll)) + " nranks=" + std::to_string(c.nranks) + " count=" + std::to_string(c.count) +
         (c.inPlace ? " in place" : "") + " root=" + std::to_string(c.root) + " slot=" + std::to_string(c.slotBytes) +
         " type=" + std::to_string(c.type) + " op=" + std::to_string(c.op);
}

bool isReduction(Coll coll) { return coll == Coll::AllReduce || coll == Coll::ReduceScatter || coll == Coll::Reduce; }

// The byte of rank r's input at index i (the data ops).
char inputByte(int r, size_t i) { return static_cast<char>(r * 37 + i * 11 + 1); }

// Sizes of the send and receive buffers in elements, and where the receive buffer lies in place.
struct Shape {
  size_t send, recv, recvInSend;
};
Shape shapeOf(const Case& c, int r) {
  const size_t n = c.nranks;
  switch (c.coll) {
    case Coll::AllGather: return {c.count, c.count * n, 0};
    case Coll::AlltoAll: return {c.count * n, c.count * n, 0};
    case Coll::ReduceScatter: return {c.count * n, c.count, r * c.count};
    case Coll::Reduce: return {c.count, r == c.root ? c.count : 0, 0};
    default: return {c.count, c.count, 0};
  }
}

// Rank r's memory: the send buffer, then the receive buffer; in place, the receive buffer is the
// send buffer (AllGather: the send buffer is the rank's block of the receive buffer).
RelayRankMemory memoryOf(const Case& c, int r) {
  const size_t elem = typeSize(c.type);
  const Shape shape = shapeOf(c, r);
  RelayRankMemory m;
  m.buffers.resize(3);
  if (c.inPlace && c.coll == Coll::AllGather) {
    m.buffers[kRelayRecv] = {0, shape.recv * elem};
    m.buffers[kRelaySend] = {r * c.count * elem, shape.send * elem};
  } else if (c.inPlace) {
    m.buffers[kRelaySend] = {0, shape.send * elem};
    m.buffers[kRelayRecv] = {shape.recvInSend * elem, shape.recv * elem};
  } else {
    m.buffers[kRelaySend] = {0, shape.send * elem};
    m.buffers[kRelayRecv] = {shape.send * elem, shape.recv * elem};
  }
  m.memory.assign(std::max(m.buffers[kRelaySend].offset + m.buffers[kRelaySend].bytes,
                           m.buffers[kRelayRecv].offset + m.buffers[kRelayRecv].bytes),
                  0x5a);
  char* send = m.memory.data() + m.buffers[kRelaySend].offset;
  for (size_t i = 0; i < shape.send; ++i) {
    if (isReduction(c.coll)) {
      const std::vector<char> e = encode(c.type, static_cast<double>(inputValue(c.type, c.op, c.nranks, r, i)));
      std::memcpy(send + i * elem, e.data(), elem);
    } else {
      for (size_t b = 0; b < elem; ++b) send[i * elem + b] = inputByte(r, i * elem + b);
    }
  }
  return m;
}

// The expected byte of rank r's output at byte b.
char expectedByte(const Case& c, int r, size_t b) {
  const size_t block = c.count * typeSize(c.type);
  switch (c.coll) {
    case Coll::AllGather: return inputByte(static_cast<int>(b / block), b % block);
    case Coll::Broadcast: return inputByte(c.root, b);
    case Coll::AlltoAll: return inputByte(static_cast<int>(b / block), r * block + b % block);
    default: return 0;
  }
}

// Runs the case in the given turns, each rank's plan changed by `alter` where given, and checks
// every output element; "" when all match.
std::string runCase(const Case& c, RelayTurns turns, uint64_t seed,
                    const std::function<void(RelayPlan&)>& alter = nullptr) {
  std::vector<RelayPlan> plans;
  std::vector<RelayRankMemory> memories;
  for (int r = 0; r < c.nranks; ++r) {
    RelayRequest request;
    request.coll = c.coll;
    request.nranks = c.nranks;
    request.rank = r;
    request.root = c.root;
    request.count = c.count;
    request.typeBytes = typeSize(c.type);
    request.inPlace = c.inPlace;
    request.slotBytes = c.slotBytes;
    plans.push_back(planRelay(request));
    if (alter) alter(plans.back());
    memories.push_back(memoryOf(c, r));
  }
  const RelayCheck check = simulateRelay(plans, memories, c.slotBytes, c.type, c.op, turns, seed);
  if (!check.ok) return check.error;
  const size_t elem = typeSize(c.type);
  for (int r = 0; r < c.nranks; ++r) {
    const RelayRegion recv = memories[r].buffers[kRelayRecv];
    const char* got = memories[r].memory.data() + recv.offset;
    if (!isReduction(c.coll)) {
      for (size_t b = 0; b < recv.bytes; ++b)
        if (got[b] != expectedByte(c, r, b))
          return "rank " + std::to_string(r) + " byte " + std::to_string(b) + ": got " + std::to_string(got[b]) +
                 ", want " + std::to_string(expectedByte(c, r, b));
      continue;
    }
    for (size_t i = 0; i < recv.bytes / elem; ++i) {
      const size_t index = c.coll == Coll::ReduceScatter ? r * c.count + i : i;
      std::vector<int64_t> values;
      for (int p = 0; p < c.nranks; ++p) values.push_back(inputValue(c.type, c.op, c.nranks, p, index));
      const std::vector<char> want = expectedElement(c.type, c.op, values);
      if (std::memcmp(got + i * elem, want.data(), elem) != 0)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": got " + show(c.type, got + i * elem) +
               ", want " + show(c.type, want.data());
    }
  }
  return "";
}

// The case in the streams' first and last orders, a few random ones, and with each rank's streams
// on one queue.
std::string runInTurns(const Case& c) {
  for (RelayTurns turns : {RelayTurns::StreamFirst, RelayTurns::StreamLast})
    if (std::string e = runCase(c, turns, 0); !e.empty()) return e;
  for (uint64_t seed = 1; seed <= 4; ++seed)
    for (RelayTurns turns : {RelayTurns::Random, RelayTurns::OneQueue})
      if (std::string e = runCase(c, turns, seed); !e.empty())
        return e + " (seed " + std::to_string(seed) + (turns == RelayTurns::OneQueue ? ", one queue)" : ")");
  return "";
}

const Coll kColls[] = {Coll::AllGather, Coll::Broadcast,     Coll::AlltoAll,
                       Coll::AllReduce, Coll::ReduceScatter, Coll::Reduce};

TEST(RelayPlans, EveryOpMovesItsDataAcrossRanksCountsAndPlacements) {
  int cases = 0;
  for (Coll coll : kColls)
    for (bool inPlace : {false, true})
      for (int nranks : {1, 2, 3, 4, 5, 8})
        // 48-byte slots hold 12 ints: around one slot, and past several rounds of the 4 slots.
        for (size_t count : {0, 1, 7, 12, 13, 47, 48, 49, 150})
          for (int root : {0, nranks - 1}) {
            if (coll != Coll::Broadcast && coll != Coll::Reduce && root != 0) continue;
            const Case c{coll, nranks, count, inPlace, root};
            EXPECT_EQ(runInTurns(c), "") << describe(c);
            ++cases;
          }
  EXPECT_GT(cases, 500);
}

TEST(RelayPlans, EveryTypeAndOpReducesAsTheReference) {
  for (slimecclDataType_t type : allTypes())
    for (slimecclRedOp_t op : allOps())
      for (Coll coll : {Coll::AllReduce, Coll::ReduceScatter, Coll::Reduce}) {
        const Case c{coll, 3, 41, false, 2, 32, type, op};
        EXPECT_EQ(runInTurns(c), "") << describe(c);
      }
}

TEST(RelayPlans, EachChunkFitsItsSlotAndEveryFlagEndsClear) {
  // The simulator fails a chunk larger than a slot and a flag left set; one slot of 16 bytes and
  // odd counts of bytes reach both edges.
  for (Coll coll : kColls)
    for (size_t count : {1, 5, 17, 300}) {
      const Case c{coll, 4, count, false, 1, 16, slimecclInt8, slimecclMax};
      EXPECT_EQ(runInTurns(c), "") << describe(c);
    }
}

// Rank `rank`'s group of Send and Recv calls among `nranks`.
RelayRequest messageRequest(int nranks, int rank, size_t slotBytes, std::vector<RelayMessage> messages) {
  RelayRequest request;
  request.coll = Coll::Send;
  request.nranks = nranks;
  request.rank = rank;
  request.slotBytes = slotBytes;
  request.messages = std::move(messages);
  return request;
}

// A group's messages: every rank sends `bytes` to each peer in `peers` (offsets from the rank)
// `repeats` times in order, and receives as much from each matching peer; itself included.
std::string runMessages(int nranks, const std::vector<int>& offsets, int repeats, size_t bytes, size_t slotBytes,
                        RelayTurns turns, uint64_t seed) {
  std::vector<RelayPlan> plans;
  std::vector<RelayRankMemory> memories;
  // Message i of rank r: its buffer, its peer, whether it sends.
  std::vector<std::vector<RelayMessage>> messages(nranks);
  for (int r = 0; r < nranks; ++r) {
    for (int k = 0; k < repeats; ++k)
      for (int offset : offsets) {
        messages[r].push_back({true, (r + offset) % nranks, bytes + k});
        messages[r].push_back({false, (r - offset % nranks + nranks) % nranks, bytes + k});
      }
    RelayRankMemory m;
    m.buffers.resize(1);
    for (const RelayMessage& message : messages[r]) {
      m.buffers.push_back({m.memory.size(), message.bytes});
      for (size_t b = 0; b < message.bytes; ++b)
        m.memory.push_back(message.send ? static_cast<char>(r * 31 + message.peer * 7 + b + message.bytes) : '\x5a');
    }
    memories.push_back(m);
    plans.push_back(planRelay(messageRequest(nranks, r, slotBytes, messages[r])));
  }
  const RelayCheck check = simulateRelay(plans, memories, slotBytes, slimecclInt8, slimecclSum, turns, seed);
  if (!check.ok) return check.error;
  for (int r = 0; r < nranks; ++r)
    for (size_t i = 0; i < messages[r].size(); ++i) {
      const RelayMessage& m = messages[r][i];
      if (m.send) continue;
      const RelayRegion region = memories[r].buffers[kRelayFirstMessage + i];
      for (size_t b = 0; b < m.bytes; ++b) {
        const char want = static_cast<char>(m.peer * 31 + r * 7 + b + m.bytes);
        if (memories[r].memory[region.offset + b] != want)
          return "rank " + std::to_string(r) + " message " + std::to_string(i) + " from " + std::to_string(m.peer) +
                 " byte " + std::to_string(b);
      }
    }
  return "";
}

TEST(RelayPlans, GroupsOfMessagesArriveWhateverTheirSizesAndPeers) {
  for (int nranks : {1, 2, 3, 5})
    for (const std::vector<int>& offsets : std::vector<std::vector<int>>{{1}, {0}, {1, 2}, {0, 1, 2, 3, 4}})
      for (int repeats : {1, 3})
        for (size_t bytes : {0, 1, 16, 100, 333})
          for (uint64_t seed = 0; seed < 6; ++seed) {
            const RelayTurns turns = seed == 0  ? RelayTurns::StreamFirst
                                     : seed % 2 ? RelayTurns::Random
                                                : RelayTurns::OneQueue;
            EXPECT_EQ(runMessages(nranks, offsets, repeats, bytes, 32, turns, seed), "")
                << "nranks " << nranks << " peers " << offsets.size() << " repeats " << repeats << " bytes " << bytes
                << " seed " << seed;
          }
}

// Plan `later` queued after `earlier` on the same rank: each stream of `later` starts once every
// stream of `earlier` is done, as an op's streams start after the op before joined.
RelayPlan inSequence(const RelayPlan& earlier, const RelayPlan& later) {
  constexpr int kJoinEvent = 100, kLaterEvents = 1000;
  RelayPlan both = earlier;
  both.streams = std::max(earlier.streams, later.streams);
  for (int s = 0; s < earlier.streams; ++s) {
    RelayStep signal;
    signal.kind = RelayStepKind::Signal;
    signal.stream = s;
    signal.event = kJoinEvent + s;
    both.steps.push_back(signal);
  }
  for (int t = 0; t < later.streams; ++t)
    for (int s = 0; s < earlier.streams; ++s) {
      RelayStep await;
      await.kind = RelayStepKind::Await;
      await.stream = t;
      await.event = kJoinEvent + s;
      both.steps.push_back(await);
    }
  for (RelayStep step : later.steps) {
    step.event += kLaterEvents;
    both.steps.push_back(step);
  }
  both.lanes = later.lanes;
  return both;
}

// The plan of a call whose one message is the rank's buffer `buffer` (a call's own messages count
// from kRelayFirstMessage): its lanes go on from `lanes` (empty: counted from slot 0 again).
RelayPlan laterCall(RelayRequest request, const RelayLaneCounts& lanes, uint32_t buffer) {
  request.lanes = lanes;
  RelayPlan plan = planRelay(request);
  for (RelayStep& step : plan.steps)
    if (step.at.buffer == kRelayFirstMessage) step.at.buffer = buffer;
  return plan;
}

// Rank 0 sends two messages of several chunks to rank 1 as two calls; rank 1 receives both in one
// group: the second call's chunks take up the slots where the first's left off, as rank 1 expects.
TEST(RelayPlans, MessagesSplitIntoCallsDifferentlyAtTheirEndsMeetInTheirSlots) {
  const size_t slot = 32, first = 96, second = 80;
  RelayRequest send = messageRequest(2, 0, slot, {{true, 1, first}});
  const RelayPlan one = planRelay(send);
  send.messages = {{true, 1, second}};
  const RelayPlan two = laterCall(send, one.lanes, kRelayFirstMessage + 1);
  EXPECT_EQ(two.lanes.toPeerPuts[1], 6u);
  RelayRequest recv = send;
  recv.rank = 1;
  recv.messages = {{false, 0, first}, {false, 0, second}};
  const std::vector<RelayPlan> plans = {inSequence(one, two), planRelay(recv)};
  for (RelayTurns turns : {RelayTurns::StreamFirst, RelayTurns::StreamLast, RelayTurns::Random, RelayTurns::OneQueue})
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<RelayRankMemory> memories(2);
      memories[0].buffers = {{0, 0}, {0, first}, {first, second}};
      memories[1].buffers = {{0, 0}, {0, first}, {first, second}};
      for (RelayRankMemory& m : memories) m.memory.assign(first + second, 0);
      for (size_t b = 0; b < first + second; ++b) memories[0].memory[b] = static_cast<char>(b * 3 + 1);
      const RelayCheck check = simulateRelay(plans, memories, slot, slimecclInt8, slimecclSum, turns, seed);
      ASSERT_TRUE(check.ok) << check.error;
      // Each rank's messages, then the landing area the simulator added.
      const std::vector<char>& sent = memories[0].memory;
      const std::vector<char>& got = memories[1].memory;
      EXPECT_TRUE(std::equal(sent.begin(), sent.begin() + static_cast<long>(first + second), got.begin()))
          << "turns " << static_cast<int>(turns) << " seed " << seed;
    }
}

// Rank 0 sends x (three chunks) and receives y1 and y2 in one group; rank 1 receives x with its Send
// of y1, and sends y2 in a call after. On one queue per rank, rank 0 must not queue its Take of y2
// ahead of the rest of x, which rank 1 takes before it puts y2.
TEST(RelayPlans, MessagesSplitIntoCallsDifferentlyBothWaysMeetOnOneQueue) {
  const size_t slot = 32, x = 96, y = 32;
  const RelayRequest group = messageRequest(2, 0, slot, {{true, 1, x}, {false, 1, y}, {false, 1, y}});
  const RelayPlan one = planRelay(messageRequest(2, 1, slot, {{true, 0, y}, {false, 0, x}}));
  const RelayPlan two = laterCall(messageRequest(2, 1, slot, {{true, 0, y}}), one.lanes, kRelayFirstMessage + 2);
  const std::vector<RelayPlan> plans = {planRelay(group), inSequence(one, two)};
  for (RelayTurns turns : {RelayTurns::OneQueue, RelayTurns::StreamFirst, RelayTurns::StreamLast, RelayTurns::Random})
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<RelayRankMemory> memories(2);
      memories[0].buffers = {{0, 0}, {0, x}, {x, y}, {x + y, y}};
      memories[1].buffers = {{0, 0}, {0, y}, {y, x}, {x + y, y}};
      for (RelayRankMemory& m : memories) m.memory.assign(x + 2 * y, 0);
      for (size_t b = 0; b < x; ++b) memories[0].memory[b] = static_cast<char>(b * 3 + 1);
      for (size_t b = 0; b < y; ++b) {
        memories[1].memory[b] = static_cast<char>(b * 5 + 2);
        memories[1].memory[x + y + b] = static_cast<char>(b * 7 + 3);
      }
      const RelayCheck check = simulateRelay(plans, memories, slot, slimecclInt8, slimecclSum, turns, seed);
      ASSERT_TRUE(check.ok) << check.error << " (turns " << static_cast<int>(turns) << ")";
      const std::vector<char>& a = memories[0].memory;
      const std::vector<char>& b = memories[1].memory;
      EXPECT_TRUE(std::equal(a.begin(), a.begin() + x, b.begin() + y)) << "x, seed " << seed;
      EXPECT_TRUE(std::equal(b.begin(), b.begin() + y, a.begin() + x)) << "y1, seed " << seed;
      EXPECT_TRUE(std::equal(b.begin() + x + y, b.begin() + x + 2 * y, a.begin() + x + y)) << "y2, seed " << seed;
    }
}

TEST(RelayPlans, WithoutTheLanesCountsASecondCallMissesItsSlots) {
  const RelayPlan one = planRelay(messageRequest(2, 0, 32, {{true, 1, 96}}));
  const RelayPlan two = laterCall(messageRequest(2, 0, 32, {{true, 1, 80}}), {}, kRelayFirstMessage + 1);
  const RelayRequest recv = messageRequest(2, 1, 32, {{false, 0, 96}, {false, 0, 80}});
  std::vector<RelayRankMemory> memories(2);
  for (RelayRankMemory& m : memories) {
    m.buffers = {{0, 0}, {0, 96}, {96, 80}};
    m.memory.assign(176, 0);
  }
  const RelayCheck check = simulateRelay({inSequence(one, two), planRelay(recv)}, memories, 32, slimecclInt8,
                                         slimecclSum, RelayTurns::StreamFirst, 0);
  EXPECT_NE(check.error.find("wait for each other"), std::string::npos) << check.error;
}

template <typename Keep>
void keepOnly(RelayPlan& plan, Keep keep) {
  plan.steps.erase(std::remove_if(plan.steps.begin(), plan.steps.end(), [&](const RelayStep& s) { return !keep(s); }),
                   plan.steps.end());
}

TEST(RelayPlans, TheSimulatorCatchesASlotReusedBeforeItIsFree) {
  const Case c{Coll::AllGather, 3, 100};
  const std::string error = runCase(c, RelayTurns::StreamFirst, 0, [](RelayPlan& plan) {
    keepOnly(plan, [](const RelayStep& s) { return s.kind != RelayStepKind::AwaitFree; });
  });
  EXPECT_NE(error.find("slot reused early"), std::string::npos) << error;
}

TEST(RelayPlans, TheSimulatorCatchesRanksThatWaitForEachOther) {
  // Every rank takes before it puts, on one stream.
  const Case c{Coll::AlltoAll, 2, 10};
  const std::string error = runCase(c, RelayTurns::Random, 1, [](RelayPlan& plan) {
    std::stable_sort(plan.steps.begin(), plan.steps.end(), [](const RelayStep& a, const RelayStep& b) {
      return (a.kind == RelayStepKind::Take) > (b.kind == RelayStepKind::Take);
    });
    for (RelayStep& s : plan.steps) s.stream = 0;
  });
  EXPECT_NE(error.find("wait for each other"), std::string::npos) << error;
}

// On one queue per rank, an AlltoAll whose Takes from each peer follow the Put to that peer (rather
// than every Put of the chunk first) waits in a cycle on 3 ranks.
TEST(RelayPlans, OneQueueCatchesTakesQueuedBeforeThePutsTheyWaitBehind) {
  const Case c{Coll::AlltoAll, 3, 40};
  const std::string error = runCase(c, RelayTurns::OneQueue, 1, [](RelayPlan& plan) {
    std::vector<RelayStep> puts, takes, rest;
    for (const RelayStep& s : plan.steps)
      (s.kind == RelayStepKind::Put ? puts : s.kind == RelayStepKind::Take ? takes : rest).push_back(s);
    plan.steps.clear();
    for (size_t i = 0; i < puts.size(); ++i) {
      plan.steps.push_back(puts[i]);
      plan.steps.push_back(takes[i]);
    }
    plan.steps.insert(plan.steps.end(), rest.begin(), rest.end());
  });
  EXPECT_NE(error.find("wait for each other"), std::string::npos) << error;
  EXPECT_EQ(runCase(c, RelayTurns::OneQueue, 1), "");
}

TEST(RelayPlans, InPlaceAlltoAllNeedsItsTakesOrderedAfterItsPuts) {
  const Case c{Coll::AlltoAll, 3, 40, true};
  int wrong = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed)
    if (runCase(c, RelayTurns::Random, seed, [](RelayPlan& plan) {
          keepOnly(plan, [](const RelayStep& s) {
            return s.kind != RelayStepKind::Signal && s.kind != RelayStepKind::Await;
          });
        }).find(": got ") != std::string::npos)
      ++wrong;
  EXPECT_GT(wrong, 0);
  for (uint64_t seed = 1; seed <= 40; ++seed) EXPECT_EQ(runCase(c, RelayTurns::Random, seed), "") << seed;
}

TEST(RelayPlans, LanesOfSeveralSlotsAtTheDefaultSizesMoveTheirData) {
  // 1 MiB slots: a lane of 1.4 MB goes in quarters of whole pages, one of 6 MB in slots, one of
  // 64 KiB whole.
  for (Coll coll : kColls)
    for (int nranks : {2, 3})
      for (size_t count : {size_t{16384}, size_t{350001}, size_t{1500000}})
        for (bool inPlace : {false, true}) {
          if (nranks > 2 && count > 1000000) continue;
          const Case c{coll, nranks, count, inPlace, nranks - 1, size_t{1} << 20};
          EXPECT_EQ(runCase(c, RelayTurns::Random, 7), "") << describe(c);
        }
}

TEST(RelayPlans, ChunksAreAQuarterOfALaneWithinTheirBounds) {
  constexpr size_t kKiB = 1024, kMiB = kKiB * kKiB;
  EXPECT_EQ(relayChunkBytes(1, 4 * kMiB), 256 * kKiB);
  EXPECT_EQ(relayChunkBytes(kMiB, 4 * kMiB), 256 * kKiB);
  EXPECT_EQ(relayChunkBytes(3 * kMiB + 1, 4 * kMiB), 772 * kKiB);
  EXPECT_EQ(relayChunkBytes(64 * kMiB, 4 * kMiB), 4 * kMiB);
  EXPECT_EQ(relayChunkBytes(kMiB, 64 * kKiB), 64 * kKiB);
  EXPECT_EQ(relayChunkBytes(100, 48), 48u);
}

// Where each lane carries one chunk the plan takes one stream, with every slot's wait at its end;
// larger ops spread over their streams.
TEST(RelayPlans, OneChunkPerLaneGoesOnOneStream) {
  for (Coll coll : kColls)
    for (size_t count : {size_t{1}, size_t{60000}, size_t{4000000}}) {
      RelayRequest request;
      request.coll = coll;
      request.nranks = 3;
      request.rank = 1;
      request.count = count;
      request.typeBytes = 4;
      request.slotBytes = size_t{4} << 20;
      const RelayPlan plan = planRelay(request);
      const bool one = count * 4 <= (size_t{256} << 10);
      EXPECT_EQ(plan.streams == 1, one) << collName(coll) << " count " << count << ": " << plan.streams << " streams";
      if (!one) continue;
      bool freeing = false;
      for (const RelayStep& step : plan.steps) {
        EXPECT_EQ(step.stream, 0);
        EXPECT_NE(step.kind, RelayStepKind::Signal);
        EXPECT_FALSE(freeing && step.kind != RelayStepKind::AwaitFree) << collName(coll) << ": a step after the waits";
        freeing = freeing || step.kind == RelayStepKind::AwaitFree;
      }
    }
}

TEST(RelayPlans, DefaultSlotsShrinkWithTheRankCountWithinTheirBounds) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(relaySlotBytesFor(1), 4 * kMiB);
  EXPECT_EQ(relaySlotBytesFor(2), 4 * kMiB);
  EXPECT_EQ(relaySlotBytesFor(4), 2 * kMiB);
  EXPECT_EQ(relaySlotBytesFor(8), kMiB);
  EXPECT_EQ(relaySlotBytesFor(64), kMiB);
  for (int n : {2, 3, 4}) EXPECT_LE(relayBytes(n, relaySlotBytesFor(n)) * n, 128 * kMiB) << n;
}

TEST(RelayPlans, LanesAndSlotsLieApartInTheRelay) {
  const size_t slot = 4096;
  const int n = 4;
  std::vector<size_t> offsets;
  for (int writer = 0; writer < n; ++writer)
    for (int s = 0; s < kRelaySlots; ++s) {
      for (int reader = 0; reader < n; ++reader)
        if (reader != writer)
          offsets.push_back(writer * relayBytes(n, slot) + relaySlotOffset(RelayLane::ToPeer, writer, reader, s, slot));
      offsets.push_back(writer * relayBytes(n, slot) + relaySlotOffset(RelayLane::Shared, writer, 0, s, slot));
    }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end());
  EXPECT_EQ(offsets.back() + slot, n * relayBytes(n, slot));
  EXPECT_EQ(relayLandingBytes(n, slot), 3 * kRelaySlots * slot);
}

}  // namespace
}  // namespace slimeccl
