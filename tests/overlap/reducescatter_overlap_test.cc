// ReduceScatterOverlap over forked ranks (shm, sockets) and threads, 1 to 4 ranks, each Reduce
// algorithm and the tuner's: every datatype and op, empty to multi-chunk blocks, blocking, on a
// host stream and in a group. Checks the reduced blocks bit for bit (exact inputs), and that the
// producer filled each block exactly once, in order 0, 1, ..., at its place in sendbuff, one call
// at a time, off the calling thread; and the refusals.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithm_case.h"
#include "buffers.h"
#include "launch_case.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {
namespace {

constexpr const char* kChunkBytes = "4096";

// What the producer was asked for, recorded from the library's thread and checked afterwards on the
// rank's own thread; it fills each block with the rank's inputs of that block's elements.
class ProduceLog {
 public:
  ProduceLog(const ReductionValues& values, int rank, unsigned char* sendbuff, size_t count, size_t blockBytes)
      : values_(values), rank_(rank), sendbuff_(sendbuff), count_(count), blockBytes_(blockBytes) {}

  static void produce(int block, void* out, size_t count, void* user) {
    static_cast<ProduceLog*>(user)->record(block, out, count);
  }

  // The rank's thread that made the log is the caller.
  void verify(int nranks) const {
    std::lock_guard<std::mutex> lock(mutex_);
    RANK_CHECK(overlapping_ == 0, overlapping_, " produce calls ran while another was running");
    RANK_CHECK(wrongPlace_ == 0, wrongPlace_, " produce calls got a block that is not sendbuff's");
    RANK_CHECK(!onCaller_, "a produce call ran on the calling thread");
    RANK_CHECK(static_cast<int>(order_.size()) == nranks, order_.size(), " produce calls for ", nranks, " blocks");
    for (int d = 0; d < static_cast<int>(order_.size()); ++d)
      RANK_CHECK(order_[d] == d, "produce call ", d, " was for block ", order_[d]);
  }

 private:
  void record(int block, void* out, size_t count) {
    if (running_.fetch_add(1) != 0) ++overlapping_;
    values_.fillInputs(out, rank_, static_cast<size_t>(block) * count_, count);
    std::lock_guard<std::mutex> lock(mutex_);
    if (out != sendbuff_ + static_cast<size_t>(block) * blockBytes_ || count != count_) ++wrongPlace_;
    if (std::this_thread::get_id() == caller_) onCaller_ = true;
    order_.push_back(block);
    running_.fetch_sub(1);
  }

  const ReductionValues& values_;
  const int rank_;
  unsigned char* const sendbuff_;
  const size_t count_, blockBytes_;
  std::atomic<int> running_{0};
  std::atomic<int> overlapping_{0};
  mutable std::mutex mutex_;
  const std::thread::id caller_ = std::this_thread::get_id();
  std::vector<int> order_;
  int wrongPlace_ = 0;
  bool onCaller_ = false;
};

struct Call {
  slimecclDataType_t datatype;
  slimecclRedOp_t op;
  size_t count;
  bool onStream;
};

std::vector<Call> calls() {
  std::vector<Call> result;
  bool onStream = false;
  for (slimecclDataType_t datatype : kAllDatatypes)
    for (slimecclRedOp_t op : kAllOps)
      for (size_t count : {size_t{1}, size_t{37}}) result.push_back({datatype, op, count, onStream = !onStream});
  // Several chunks per block, on both paths.
  for (bool stream : {false, true}) result.push_back({slimecclFloat32, slimecclSum, 20000 + 3, stream});
  return result;
}

void runCall(const Call& call, int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream, uint64_t seed) {
  const size_t blockBytes = call.count * datatypeSize(call.datatype);
  const ReductionValues values(call.datatype, call.op, nranks, seed);
  std::vector<unsigned char> send(blockBytes * nranks, 0xee), recv(blockBytes + 1, 0xee);
  ProduceLog log(values, rank, send.data(), call.count, blockBytes);
  RANK_CHECK_SUCCESS(slimecclReduceScatterOverlap(send.data(), recv.data(), call.count, call.datatype, call.op,
                                                  ProduceLog::produce, &log, comm, call.onStream ? stream : nullptr),
                     comm);
  if (call.onStream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  log.verify(nranks);
  const std::string wrong = values.resultMismatch(recv.data(), static_cast<size_t>(rank) * call.count, call.count);
  RANK_CHECK(wrong.empty(), "recvbuff: ", wrong);
  RANK_CHECK(recv.back() == 0xee, "a byte past recvbuff was written");
}

class ReduceScatterOverlapSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(ReduceScatterOverlapSweep, ProducedBlocksAreReduced) {
  RunOptions options = algorithmOptions(GetParam());
  options.env["SLIMECCL_CHUNK_BYTES"] = kChunkBytes;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        int nranks = 0;
        RANK_CHECK_SUCCESS(slimecclCommCount(comm, &nranks), comm);
        slimecclStream_t stream = nullptr;
        RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
        uint64_t seed = 0;
        for (const Call& call : calls())
          withContext(concat("ReduceScatterOverlap of ", call.count, " x ", datatypeName(call.datatype), " ",
                             opName(call.op), call.onStream ? " on a stream" : ""),
                      [&] { runCall(call, rank, nranks, comm, stream, ++seed); });
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
      },
      options);
}

std::vector<AlgorithmCase> sweepCases() {
  const auto launches = {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads};
  std::vector<AlgorithmCase> cases = algorithmCases(Collective::kReduce, false, launches, {3});
  for (const AlgorithmCase& c : algorithmCases(Collective::kReduce, true, launches, {1, 2, 4}))
    if (c.algorithm == kTunerChoice) cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Launches, ReduceScatterOverlapSweep, ::testing::ValuesIn(sweepCases()), algorithmCaseName);

// Two calls in one group: the blocks of both are produced, in order, before the group's Reduces run
// together, and both results are right.
class ReduceScatterOverlapGroup : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(ReduceScatterOverlapGroup, TwoCallsInOneGroup) {
  const int nranks = GetParam().nranks;
  runRanks(GetParam().launch, nranks, [nranks](int rank, slimecclComm_t comm) {
    const size_t counts[2] = {5000, 3};
    std::vector<std::unique_ptr<ReductionValues>> values;
    std::vector<std::vector<unsigned char>> send(2), recv(2);
    std::vector<std::unique_ptr<ProduceLog>> logs;
    RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
    for (int i = 0; i < 2; ++i) {
      values.push_back(std::make_unique<ReductionValues>(slimecclInt32, slimecclSum, nranks, 70 + i));
      send[i].assign(counts[i] * 4 * nranks, 0);
      recv[i].assign(counts[i] * 4, 0);
      logs.push_back(std::make_unique<ProduceLog>(*values[i], rank, send[i].data(), counts[i], counts[i] * 4));
      RANK_CHECK_SUCCESS(slimecclReduceScatterOverlap(send[i].data(), recv[i].data(), counts[i], slimecclInt32,
                                                      slimecclSum, ProduceLog::produce, logs[i].get(), comm, nullptr),
                         comm);
    }
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    for (int i = 0; i < 2; ++i)
      withContext(concat("call ", i), [&] {
        logs[i]->verify(nranks);
        const std::string wrong = values[i]->resultMismatch(recv[i].data(), rank * counts[i], counts[i]);
        RANK_CHECK(wrong.empty(), "recvbuff: ", wrong);
      });
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, ReduceScatterOverlapGroup,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kThreads}, {1, 3})),
                         launchCaseName);

// Ranks that disagree on the count fail on both sides with a sentence, without hanging.
TEST(ReduceScatterOverlapMismatch, DifferentCountsFailOnEveryRankWithoutHanging) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      Launch::kForkedShm, 2,
      [](int rank, slimecclComm_t comm) {
        const size_t count = rank == 0 ? 4 : 8;
        const ReductionValues values(slimecclFloat32, slimecclSum, 2, 1);
        std::vector<unsigned char> send(count * 4 * 2), recv(count * 4);
        ProduceLog log(values, rank, send.data(), count, count * 4);
        const slimecclResult_t rc = slimecclReduceScatterOverlap(send.data(), recv.data(), count, slimecclFloat32,
                                                                 slimecclSum, ProduceLog::produce, &log, comm, nullptr);
        RANK_CHECK(rc == slimecclInvalidUsage || rc == slimecclRemoteError, "got ", resultName(rc), ": ",
                   lastErrorText(comm));
        RANK_CHECK(lastErrorText(comm).find("Reduce") != std::string::npos, lastErrorText(comm));
      },
      options);
}

// Rank 0 aborts its comm while its producer is still filling block 1: its waiting Reduce sees the
// abort, the producer stops after that callback, and the call fails; rank 1's Reduce of block 1,
// whose peer is gone, fails too. Neither waits past the comm's timeout.
TEST(ReduceScatterOverlapFaults, AnAbortWhileABlockIsProducedEndsTheCall) {
  RunOptions options;
  options.teardown = Teardown::kNone;
  options.env["SLIMECCL_TIMEOUT_MS"] = "3000";
  runRanks(
      Launch::kForkedShm, 2,
      [](int rank, slimecclComm_t comm) {
        struct Slow {
          std::atomic<int> calls{0};
          static void produce(int block, void* out, size_t count, void* user) {
            memset(out, 0, count * 4);
            static_cast<Slow*>(user)->calls.fetch_add(1);
            if (block == 1) std::this_thread::sleep_for(std::chrono::milliseconds(800));
          }
        } slow;
        const size_t count = 1024;
        std::vector<float> send(count * 2), recv(count);
        std::thread aborter;
        if (rank == 0)
          aborter = std::thread([comm] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            slimecclCommAbort(comm);
          });
        const auto start = std::chrono::steady_clock::now();
        const slimecclResult_t rc = slimecclReduceScatterOverlap(send.data(), recv.data(), count, slimecclFloat32,
                                                                 slimecclSum, Slow::produce, &slow, comm, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (aborter.joinable()) aborter.join();
        RANK_CHECK(rc != slimecclSuccess, "the call succeeded across an abort");
        RANK_CHECK(seconds < 6.0, "the call took ", seconds, " s");
        RANK_CHECK(slow.calls.load() <= 2, slow.calls.load(), " produce calls");
        if (rank == 1) slimecclCommAbort(comm);
      },
      options);
}

void neverCalled(int, void*, size_t, void*) { ADD_FAILURE() << "produce was called"; }

TEST(ReduceScatterOverlapErrors, RefusesBadArgumentsWithASentence) {
  runRanks(Launch::kThreads, 2, [](int rank, slimecclComm_t comm) {
    std::vector<float> send(8), recv(4);
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclReduceScatterOverlap(send.data(), recv.data(), 4, slimecclFloat32, slimecclSum, nullptr,
                                                   nullptr, comm, nullptr),
                      comm);
    RANK_CHECK(std::string(slimecclGetLastError(comm)).find("produce is NULL") != std::string::npos,
               slimecclGetLastError(comm));
    RANK_CHECK_RESULT(
        slimecclInvalidArgument,
        slimecclReduceScatterOverlap(send.data(), recv.data(), 4, slimecclFloat32, static_cast<slimecclRedOp_t>(77),
                                     neverCalled, nullptr, comm, nullptr),
        comm);
    RANK_CHECK_RESULT(slimecclInvalidArgument,
                      slimecclReduceScatterOverlap(nullptr, recv.data(), 4, slimecclFloat32, slimecclSum, neverCalled,
                                                   nullptr, comm, nullptr),
                      comm);
    // Nothing to reduce: no call to produce.
    RANK_CHECK_SUCCESS(slimecclReduceScatterOverlap(send.data(), recv.data(), 0, slimecclFloat32, slimecclSum,
                                                    neverCalled, nullptr, comm, nullptr),
                       comm);
    (void)rank;
  });
}

}  // namespace
}  // namespace slimeccl_test
