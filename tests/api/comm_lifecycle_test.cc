// Communicator queries and lifecycle: Count/UserRank/GetAsyncError on a healthy communicator,
// Finalize then Destroy, and Abort from another thread while a call is blocked.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "allgather_buffers.h"
#include "cross_rank_signal.h"
#include "harness.h"
#include "launch_case.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

using Clock = std::chrono::steady_clock;

class CommQueries : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(CommQueries, HealthyCommReportsSizeRankAndNoAsyncError) {
  const int expectedSize = GetParam().nranks;
  runRanks(GetParam().launch, expectedSize, [expectedSize](int rank, slimecclComm_t comm) {
    int size = -1;
    int userRank = -1;
    RANK_CHECK_SUCCESS(slimecclCommCount(comm, &size), comm);
    RANK_CHECK_SUCCESS(slimecclCommUserRank(comm, &userRank), comm);
    RANK_CHECK(size == expectedSize, "slimecclCommCount says ", size);
    RANK_CHECK(userRank == rank, "slimecclCommUserRank says ", userRank);
    AllGatherBuffers buffers(rank, size, 1, slimecclInt64, false, 9);
    RANK_CHECK_SUCCESS(slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), 1, slimecclInt64, comm, nullptr),
                       comm);
    buffers.verify();
    slimecclResult_t asyncError = slimecclInternalError;
    RANK_CHECK_SUCCESS(slimecclCommGetAsyncError(comm, &asyncError), comm);
    RANK_CHECK(asyncError == slimecclSuccess, "slimecclCommGetAsyncError reports ", resultName(asyncError));
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, CommQueries,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads,
                                                          Launch::kThreadsInitAll},
                                                         {1, 4})),
                         launchCaseName);

class CommLifecycle : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(CommLifecycle, FinalizeThenDestroyAndNoCallsInBetween) {
  RunOptions options;
  options.teardown = Teardown::kNone;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        const int nranks = commSize(comm);
        AllGatherBuffers buffers(rank, nranks, 4096, slimecclUint8, true, 11);
        RANK_CHECK_SUCCESS(slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                             buffers.datatype(), comm, nullptr),
                           comm);
        buffers.verify();
        RANK_CHECK_SUCCESS(slimecclCommFinalize(comm), comm);
        // A finalized communicator takes no new work; these must fail at once, not block.
        std::vector<char> send(8, 's');
        std::vector<char> recv(8 * static_cast<size_t>(nranks), 'r');
        const int peer = (rank + 1) % nranks;
        RANK_CHECK_RESULT(slimecclInvalidUsage,
                          slimecclAllGather(send.data(), recv.data(), send.size(), slimecclInt8, comm, nullptr), comm);
        RANK_CHECK_RESULT(slimecclInvalidUsage, slimecclSend(send.data(), 8, slimecclInt8, peer, comm, nullptr), comm);
        RANK_CHECK_RESULT(slimecclInvalidUsage, slimecclRecv(recv.data(), 8, slimecclInt8, peer, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclCommDestroy(comm), nullptr);
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, CommLifecycle,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kThreads}, {2, 4})),
                         launchCaseName);

class CommAbort : public ::testing::TestWithParam<Launch> {};

// Rank 0 receives from rank 1, which never sends, and another thread of rank 0 aborts the comm.
// With connectFirst the ranks first exchange a message, so that the Recv waits straight on the net
// module (src/exec/eager_p2p.h) rather than in the executor.
void abortUnblocksARecv(Launch launch, bool connectFirst) {
  constexpr auto kAbortAfter = std::chrono::milliseconds(300);
  constexpr auto kRecvMustReturnWithin = std::chrono::milliseconds(2500);
  CrossRankSignal rank0Finished;
  RunOptions options;
  options.teardown = Teardown::kNone;
  runRanks(
      launch, 2,
      [&](int rank, slimecclComm_t comm) {
        if (connectFirst) {
          int out = rank, in = -1;
          RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
          RANK_CHECK_SUCCESS(slimecclSend(&out, 1, slimecclInt32, 1 - rank, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(&in, 1, slimecclInt32, 1 - rank, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          RANK_CHECK(in == 1 - rank, "the first exchange carried ", in);
        }
        if (rank == 1) {
          // Stay connected without sending anything until rank 0 is done.
          const bool released = rank0Finished.wait(1, std::chrono::seconds(30));
          RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
          RANK_CHECK(released, "rank 0 never finished");
          return;
        }
        Clock::time_point abortStarted;
        slimecclResult_t abortResult = slimecclInternalError;
        std::thread aborter([&] {
          std::this_thread::sleep_for(kAbortAfter);
          abortStarted = Clock::now();
          abortResult = slimecclCommAbort(comm);
        });
        int value = 0;
        const slimecclResult_t recvResult = slimecclRecv(&value, 1, slimecclInt32, 1, comm, nullptr);
        const Clock::time_point recvReturned = Clock::now();
        aborter.join();
        rank0Finished.notify();
        RANK_CHECK(recvResult != slimecclSuccess, "the receive succeeded although rank 1 never sent");
        RANK_CHECK(recvReturned >= abortStarted, "the receive returned ", resultName(recvResult),
                   " before slimecclCommAbort was called");
        RANK_CHECK(recvReturned - abortStarted < kRecvMustReturnWithin, "the receive returned ",
                   std::chrono::duration_cast<std::chrono::milliseconds>(recvReturned - abortStarted).count(),
                   " ms after slimecclCommAbort");
        RANK_CHECK(abortResult == slimecclSuccess, "slimecclCommAbort returned ", resultName(abortResult));
      },
      options);
}

TEST_P(CommAbort, UnblocksARecvFromAPeerThatNeverSends) { abortUnblocksARecv(GetParam(), false); }

TEST_P(CommAbort, UnblocksARecvOnAConnectedLinkFromAPeerThatNeverSends) { abortUnblocksARecv(GetParam(), true); }

INSTANTIATE_TEST_SUITE_P(Launches, CommAbort,
                         ::testing::Values(Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads),
                         [](const ::testing::TestParamInfo<Launch>& info) {
                           return std::string(launchName(info.param));
                         });

}  // namespace
}  // namespace slimeccl_test
