// Launchers that run one function on every rank of a communicator, with ranks as threads of
// this process or as forked children, and report each rank's failure as a gtest failure.
#pragma once

#include <slimeccl.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace slimeccl_test {

// Runs on every rank with that rank's communicator. Checks inside use RANK_CHECK*.
using RankFn = std::function<void(int rank, slimecclComm_t comm)>;
// Runs on every rank before any communicator exists, for tests that create it themselves.
using RawRankFn = std::function<void(int rank, int nranks, const slimecclUniqueId& id)>;

// What the launcher does with a rank's communicator once RankFn returns.
enum class Teardown {
  kFinalizeAndDestroy,  // both must return slimecclSuccess
  kAbort,               // for communicators a test has driven into an error; must return slimecclSuccess
  kNone,                // RankFn frees the communicator itself
};

struct RunOptions {
  // SLIMECCL_* variables set before the first library call. Unless given here or already in the
  // environment, SLIMECCL_TIMEOUT_MS is set to kDefaultTimeoutMs so a broken peer shows up as
  // slimecclTimeout with a sentence instead of a hang.
  std::map<std::string, std::string> env;
  // When set, communicators are created with slimecclCommInitRankConfig (ignored by InitAll).
  std::optional<slimecclConfig_t> config;
  Teardown teardown = Teardown::kFinalizeAndDestroy;
  // Past it, forked ranks are killed and reported; stuck threads end the test process.
  std::chrono::seconds deadline{45};
};

inline constexpr int kDefaultTimeoutMs = 10000;

// One thread per rank: slimecclGetUniqueId once, then slimecclCommInitRank on each thread.
void runThreads(int nranks, const RankFn& fn, const RunOptions& options = {});
// One thread per rank over communicators made by a single slimecclCommInitAll call.
void runThreadsInitAll(int nranks, const RankFn& fn, const RunOptions& options = {});
void runThreadsRaw(int nranks, const RawRankFn& fn, const RunOptions& options = {});

// One child process per rank, forked before any library call; child 0 makes the unique id and
// pipes it to the others.
void runForked(int nranks, const RankFn& fn, const RunOptions& options = {});
void runForkedRaw(int nranks, const RawRankFn& fn, const RunOptions& options = {});

enum class Launch { kForkedShm, kForkedSocket, kThreads, kThreadsInitAll };

const char* launchName(Launch launch);
// Forked launches pin the net module with SLIMECCL_NET; thread launches leave the choice to the library.
void runRanks(Launch launch, int nranks, const RankFn& fn, RunOptions options = {});
// The same for RawRankFn; kThreadsInitAll runs as kThreads, since there is no communicator to share.
void runRanksRaw(Launch launch, int nranks, const RawRankFn& fn, RunOptions options = {});

// For RawRankFn bodies: makes this rank's communicator, runs body on it, then finalizes and
// destroys it. A failed check inside body aborts the communicator first, so peers stop waiting.
void withComm(int rank, int nranks, const slimecclUniqueId& id, const std::function<void(slimecclComm_t)>& body);

// slimecclCommCount / slimecclCommUserRank, checked.
int commSize(slimecclComm_t comm);
int commRank(slimecclComm_t comm);

}  // namespace slimeccl_test
