// Timeouts: a peer that never joins an AllGather or never arrives at init turns into
// slimecclTimeout within the configured time, with a sentence naming the missing rank.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "allgather_buffers.h"
#include "cross_rank_signal.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTimeoutMs = 2000;
// Accepted time to report the timeout: not before it could have passed, and with room for a
// loaded CI machine after it.
constexpr std::chrono::milliseconds kEarliestReport{1500};
constexpr std::chrono::milliseconds kLatestReport{7000};
constexpr std::chrono::milliseconds kFailFastBudget{1000};

enum class TimeoutSource { kEnv, kConfig };

struct TimeoutCase {
  Launch launch;
  TimeoutSource source;
};

std::string timeoutCaseName(const ::testing::TestParamInfo<TimeoutCase>& info) {
  return std::string(launchName(info.param.launch)) + (info.param.source == TimeoutSource::kEnv ? "_env" : "_config");
}

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const TimeoutCase& timeoutCase, std::ostream* os) { *os << timeoutCaseName({timeoutCase, 0}); }

slimecclConfig_t configWithTimeout() {
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.timeoutMs = kTimeoutMs;
  return config;
}

// The timeout set through SLIMECCL_TIMEOUT_MS or through the config, never both.
RunOptions optionsWithTimeout(TimeoutSource source) {
  RunOptions options;
  if (source == TimeoutSource::kEnv)
    options.env["SLIMECCL_TIMEOUT_MS"] = std::to_string(kTimeoutMs);
  else
    options.config = configWithTimeout();
  return options;
}

long long milliseconds(Clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

void checkReportedInTime(Clock::duration elapsed, const char* what) {
  RANK_CHECK(elapsed >= kEarliestReport && elapsed <= kLatestReport, what, " gave up after ", milliseconds(elapsed),
             " ms with a timeout of ", kTimeoutMs, " ms");
}

class Timeout : public ::testing::TestWithParam<TimeoutCase> {};

TEST_P(Timeout, AllGatherWithAPeerThatNeverJoins) {
  constexpr int kMissingRank = 2;
  CrossRankSignal waitingRanksDone;
  RunOptions options = optionsWithTimeout(GetParam().source);
  options.teardown = Teardown::kNone;
  runRanks(
      GetParam().launch, 3,
      [&](int rank, slimecclComm_t comm) {
        if (rank == kMissingRank) {
          const bool released = waitingRanksDone.wait(2, std::chrono::seconds(30));
          RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
          RANK_CHECK(released, "ranks 0 and 1 never finished");
          return;
        }
        try {
          AllGatherBuffers buffers(rank, 3, 1024, slimecclInt32, false, 1);
          const auto start = Clock::now();
          RANK_CHECK_RESULT(slimecclTimeout,
                            slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                              buffers.datatype(), comm, nullptr),
                            comm);
          checkReportedInTime(Clock::now() - start, "the AllGather");
          const std::string error = lastErrorText(comm);
          RANK_CHECK(error.find(std::to_string(kMissingRank)) != std::string::npos,
                     "slimecclGetLastError should name the missing rank ", kMissingRank, ": \"", error, "\"");

          // The communicator is now failed: later calls fail at once instead of waiting again.
          const auto retry = Clock::now();
          const slimecclResult_t again = slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(),
                                                           buffers.datatype(), comm, nullptr);
          const auto retryTook = Clock::now() - retry;
          RANK_CHECK(again != slimecclSuccess, "an AllGather on the failed communicator succeeded");
          RANK_CHECK(retryTook < kFailFastBudget, "an AllGather on the failed communicator took ",
                     milliseconds(retryTook), " ms to fail");
          slimecclResult_t asyncError = slimecclSuccess;
          RANK_CHECK_SUCCESS(slimecclCommGetAsyncError(comm, &asyncError), comm);
          RANK_CHECK(asyncError == slimecclTimeout, "slimecclCommGetAsyncError reports ", resultName(asyncError));
          RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
        } catch (...) {
          waitingRanksDone.notify();
          throw;
        }
        waitingRanksDone.notify();
      },
      options);
}

TEST_P(Timeout, InitWithARankThatNeverArrives) {
  constexpr int kMissingRank = 2;
  const TimeoutCase timeoutCase = GetParam();
  RunOptions options = optionsWithTimeout(timeoutCase.source);
  RawRankFn initWithoutRank2 = [&](int rank, int nranks, const slimecclUniqueId& id) {
    if (rank == kMissingRank) return;
    slimecclComm_t comm = nullptr;
    const auto start = Clock::now();
    slimecclResult_t result;
    if (options.config) {
      slimecclConfig_t config = *options.config;
      result = slimecclCommInitRankConfig(&comm, nranks, id, rank, &config);
    } else {
      result = slimecclCommInitRank(&comm, nranks, id, rank);
    }
    const auto elapsed = Clock::now() - start;
    RANK_CHECK(result == slimecclTimeout, "init returned ", resultName(result),
               "; last error: ", lastErrorText(nullptr));
    checkReportedInTime(elapsed, "init");
    const std::string error = lastErrorText(nullptr);
    RANK_CHECK(error.find(std::to_string(kMissingRank)) != std::string::npos,
               "slimecclGetLastError(NULL) should name rank ", kMissingRank, ", which never arrived: \"", error, "\"");
  };
  runRanksRaw(timeoutCase.launch, 3, initWithoutRank2, options);
}

INSTANTIATE_TEST_SUITE_P(Sources, Timeout,
                         ::testing::Values(TimeoutCase{Launch::kForkedShm, TimeoutSource::kEnv},
                                           TimeoutCase{Launch::kForkedShm, TimeoutSource::kConfig},
                                           TimeoutCase{Launch::kForkedSocket, TimeoutSource::kEnv},
                                           TimeoutCase{Launch::kForkedSocket, TimeoutSource::kConfig},
                                           TimeoutCase{Launch::kThreads, TimeoutSource::kEnv},
                                           TimeoutCase{Launch::kThreads, TimeoutSource::kConfig}),
                         timeoutCaseName);

}  // namespace
}  // namespace slimeccl_test
