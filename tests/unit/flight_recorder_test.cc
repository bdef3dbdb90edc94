// The flight recorder's table: ops that run at once, ops queued far ahead of their run (a stream),
// and ops that fail before they start.
#include "src/debug/flight_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/text_search.h"

namespace slimeccl {
namespace {

OpRecord allGather(uint64_t traceId) {
  OpRecord op{};
  op.coll = Coll::AllGather;
  op.count = 4;
  op.type = slimecclFloat;
  op.seq = traceId - 1;
  op.traceId = traceId;
  return op;
}

TEST(FlightRecorder, OpsThatRunAtOnceAreListedDoneInOrder) {
  FlightRecorder recorder;
  for (uint64_t id = 1; id <= 3; ++id) {
    OpRecord op = allGather(id);
    recorder.running(op, nullptr);
    recorder.finished(op, true, "");
  }
  std::string dump = recorder.dump(0, 2, "tp");
  EXPECT_NE(dump.find("rank 0 of 2, comm 'tp', last 3 ops"), std::string::npos) << dump;
  EXPECT_EQ(countOf(dump, "took"), 3u) << dump;
  EXPECT_LT(dump.find("seq 0,"), dump.find("seq 2,")) << dump;
}

// A stream queues more ops than the ring holds before the first runs: each op still ends with one
// entry in its final state, and the ring ends with the newest ops.
TEST(FlightRecorder, OpsQueuedFurtherAheadThanTheRingHoldsEndDone) {
  FlightRecorder recorder;
  const uint64_t ops = 200;
  std::vector<OpRecord> queue;
  for (uint64_t id = 1; id <= ops; ++id) {
    queue.push_back(allGather(id));
    recorder.queued(queue.back());
  }
  for (OpRecord& op : queue) {
    recorder.running(op, nullptr);
    if (op.traceId == ops) {
      EXPECT_EQ(countOf(recorder.dump(0, 1, ""), "running for"), 1u);
    }
    recorder.finished(op, true, "");
  }
  std::string dump = recorder.dump(0, 1, "");
  EXPECT_EQ(countOf(dump, "ago"), 0u) << dump;
  EXPECT_EQ(countOf(dump, "running for"), 0u) << dump;
  EXPECT_NE(dump.find("seq " + std::to_string(ops - 1) + ","), std::string::npos) << dump;
  EXPECT_EQ(dump.find("seq 0,"), std::string::npos) << dump;
}

// An op queued GPU to GPU (entered when called on its stream, never running on the host) is listed
// as handed to the GPU, timed from then, not from the clock's zero.
TEST(FlightRecorder, AnOpQueuedOnTheGpuIsListedAsHandedToIt) {
  FlightRecorder recorder;
  OpRecord op = allGather(1);
  recorder.queued(op);
  recorder.handedToGpu(op);
  std::string dump = recorder.dump(0, 2, "");
  EXPECT_NE(dump.find("on GPU"), std::string::npos) << dump;
  EXPECT_NE(dump.find("queued on its CUDA stream 0.0"), std::string::npos) << dump;
  EXPECT_EQ(countOf(dump, "took"), 0u) << dump;
}

TEST(FlightRecorder, AnOpThatFailsBeforeItStartsIsListedWithItsCause) {
  FlightRecorder recorder;
  OpRecord op = allGather(1);
  recorder.finished(op, false, "copying from the GPU failed");
  std::string dump = recorder.dump(1, 2, "");
  EXPECT_EQ(countOf(dump, "failed after"), 1u) << dump;
  EXPECT_NE(dump.find("copying from the GPU failed"), std::string::npos) << dump;
}

// A Send or Recv that runs as one eager message has no plan: its entry names the peer it waits on.
TEST(FlightRecorder, AnEagerMessageThatWaitsNamesItsPeer) {
  FlightRecorder recorder;
  OpRecord op{};
  op.coll = Coll::Recv;
  op.count = 8;
  op.type = slimecclInt8;
  op.peer = 3;
  op.traceId = 1;
  recorder.running(op, nullptr);
  std::string dump = recorder.dump(0, 4, "");
  EXPECT_NE(dump.find("running for"), std::string::npos) << dump;
  EXPECT_NE(dump.find("waiting on peer 3 (one eager message)"), std::string::npos) << dump;
}

}  // namespace
}  // namespace slimeccl
