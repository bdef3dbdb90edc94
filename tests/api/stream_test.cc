// Host streams: calls enqueue and return at once, run in order, and report completion and
// errors through slimecclStreamQuery / slimecclStreamSynchronize.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "allgather_buffers.h"
#include "harness.h"
#include "launch_case.h"
#include "p2p_messages.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

using Clock = std::chrono::steady_clock;

slimecclStream_t createStream() {
  slimecclStream_t stream = nullptr;
  RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), nullptr);
  RANK_CHECK(stream != nullptr, "slimecclStreamCreate returned success but no stream");
  return stream;
}

void enqueueAllgather(AllGatherBuffers& buffers, slimecclComm_t comm, slimecclStream_t stream) {
  RANK_CHECK_SUCCESS(
      slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(), buffers.datatype(), comm, stream),
      comm);
}

long long millisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

class HostStream : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(HostStream, CallsReturnBeforePeersArriveAndCompleteAtSynchronize) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    const int right = (rank + 1) % nranks;
    const int left = (rank + nranks - 1) % nranks;
    // No call can complete before the last rank joins, so a call that waited for completion
    // would take at least this long.
    constexpr auto kLastRankDelay = std::chrono::milliseconds(800);
    constexpr long long kEnqueueBudgetMs = 400;
    const bool late = rank == nranks - 1;
    if (late) std::this_thread::sleep_for(kLastRankDelay);

    slimecclStream_t stream = createStream();
    std::deque<AllGatherBuffers> allgathers;
    allgathers.emplace_back(rank, nranks, 4096, slimecclInt32, false, 1);
    allgathers.emplace_back(rank, nranks, (size_t{1} << 20) + 7, slimecclInt8, true, 2);
    allgathers.emplace_back(rank, nranks, 13, slimecclFloat16, false, 3);
    GuardedBuffer outgoing = outgoingMessage(rank, right, 0, 65537);
    GuardedBuffer incoming(65537);

    const auto start = Clock::now();
    for (AllGatherBuffers& buffers : allgathers) enqueueAllgather(buffers, comm, stream);
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), incoming.size(), slimecclInt8, left, comm, stream), comm);
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), outgoing.size(), slimecclInt8, right, comm, stream), comm);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    const long long enqueueMs = millisecondsSince(start);
    RANK_CHECK(late || enqueueMs < kEnqueueBudgetMs, "enqueueing took ", enqueueMs,
               " ms while the last rank had not started; calls on a stream must not wait for completion");

    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
    RANK_CHECK_SUCCESS(slimecclStreamQuery(stream), comm);
    for (const AllGatherBuffers& buffers : allgathers) withContext(buffers.describe(), [&] { buffers.verify(); });
    verifyMessage(incoming, left, rank, 0);
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
  });
}

TEST_P(HostStream, CallsOnOneStreamRunInOrder) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    constexpr int kChainLength = 4;
    constexpr size_t kBlockBytes = 65539;
    constexpr uint64_t kSeed = 77;
    // Call k sends the block that call k-1 received from the right-hand neighbour, so block j of
    // output k holds the data of rank (j + k) % nranks, but only if call k ran after call k-1.
    GuardedBuffer firstInput(kBlockBytes);
    fillPattern(firstInput.data(), kBlockBytes, kSeed, rank);
    std::vector<GuardedBuffer> outputs;
    for (int call = 0; call < kChainLength; ++call) outputs.emplace_back(static_cast<size_t>(nranks) * kBlockBytes);

    slimecclStream_t stream = createStream();
    for (int call = 0; call < kChainLength; ++call) {
      const uint8_t* input = call == 0
                                 ? firstInput.data()
                                 : outputs[call - 1].data() + static_cast<size_t>((rank + 1) % nranks) * kBlockBytes;
      RANK_CHECK_SUCCESS(slimecclAllGather(input, outputs[call].data(), kBlockBytes, slimecclUint8, comm, stream),
                         comm);
    }
    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
    for (int call = 0; call < kChainLength; ++call) {
      for (int block = 0; block < nranks; ++block) {
        std::string mismatch = patternMismatch(outputs[call].data() + static_cast<size_t>(block) * kBlockBytes,
                                               kBlockBytes, kSeed, (block + call) % nranks);
        RANK_CHECK(mismatch.empty(), "output of call ", call, ", block ", block, ": ", mismatch);
      }
      std::string damage = outputs[call].guardDamage();
      RANK_CHECK(damage.empty(), "output of call ", call, ": ", damage);
    }
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
  });
}

TEST_P(HostStream, QueryIsInProgressUntilDrained) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    constexpr auto kLastRankDelay = std::chrono::milliseconds(500);
    slimecclStream_t stream = createStream();
    RANK_CHECK_SUCCESS(slimecclStreamQuery(stream), nullptr);
    if (rank == nranks - 1) std::this_thread::sleep_for(kLastRankDelay);

    AllGatherBuffers buffers(rank, nranks, 4096, slimecclFloat32, false, 5);
    enqueueAllgather(buffers, comm, stream);
    // The last rank has not enqueued yet, so rank 0's AllGather cannot have completed.
    if (rank == 0) RANK_CHECK_RESULT(slimecclInProgress, slimecclStreamQuery(stream), comm);
    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
    RANK_CHECK_SUCCESS(slimecclStreamQuery(stream), comm);
    buffers.verify();
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
  });
}

TEST_P(HostStream, FailedCallSurfacesAtSynchronize) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        if (rank > 1) return;
        // Rank 0 sends 16 KiB where rank 1 expects 12 KiB: valid arguments, so the calls enqueue,
        // and the mismatch can only be found once the pair meets (above the eager size, so on
        // both sides).
        std::vector<char> outgoing(16384, 'y');
        std::vector<char> incoming(12288, 0);
        slimecclStream_t stream = createStream();
        if (rank == 0)
          RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), outgoing.size(), slimecclInt8, 1, comm, stream), comm);
        else
          RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), incoming.size(), slimecclInt8, 0, comm, stream), comm);
        RANK_CHECK_RESULT(slimecclInvalidUsage, slimecclStreamSynchronize(stream), comm);
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, HostStream,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {3, 5})),
                         launchCaseName);

}  // namespace
}  // namespace slimeccl_test
