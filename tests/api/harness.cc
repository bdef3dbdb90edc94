#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "rank_check.h"

namespace slimeccl_test {

namespace {

using Clock = std::chrono::steady_clock;

// Once one forked rank has failed, the others get this long before they are killed: enough to
// report their own errors, short enough not to wait for every peer's timeout.
constexpr std::chrono::seconds kGraceAfterFailure{3};
constexpr size_t kMaxReportBytes = 4096;  // well under a pipe's capacity, so a child never blocks on it
constexpr int kChildFailedExit = 1;
constexpr int kChildSetupExit = 2;

std::map<std::string, std::string> envWithDefaults(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> env = overrides;
  if (!env.contains("SLIMECCL_TIMEOUT_MS") && std::getenv("SLIMECCL_TIMEOUT_MS") == nullptr)
    env["SLIMECCL_TIMEOUT_MS"] = std::to_string(kDefaultTimeoutMs);
  return env;
}

// Sets variables for the lifetime of the object and restores the previous values, so a test's
// overrides do not leak into the next test when several run in one process.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& values) {
    for (const auto& [name, value] : values) {
      const char* previous = std::getenv(name.c_str());
      saved_.emplace_back(name, previous ? std::optional<std::string>(previous) : std::nullopt);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, previous] : saved_) {
      if (previous)
        setenv(name.c_str(), previous->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Runs `body` and returns the failure it raised, or an empty string.
template <typename Body>
std::string failureOf(Body&& body) {
  try {
    body();
    return {};
  } catch (const RankFailure& failure) {
    return failure.what();
  } catch (const std::exception& error) {
    return concat("unexpected exception: ", error.what());
  } catch (...) {
    return "unexpected non-standard exception";
  }
}

slimecclComm_t initRank(int nranks, const slimecclUniqueId& id, int rank, const RunOptions& options) {
  slimecclComm_t comm = nullptr;
  if (options.config) {
    slimecclConfig_t config = *options.config;
    RANK_CHECK_SUCCESS(slimecclCommInitRankConfig(&comm, nranks, id, rank, &config), nullptr);
  } else {
    RANK_CHECK_SUCCESS(slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
  }
  RANK_CHECK(comm != nullptr, "init returned success but no communicator");
  return comm;
}

// Runs fn, then frees the communicator as asked. A failed rank aborts its communicator so that
// it releases its resources and its peers see an error rather than silence.
void runOnComm(int rank, slimecclComm_t comm, const RankFn& fn, Teardown teardown) {
  try {
    fn(rank, comm);
  } catch (...) {
    if (teardown != Teardown::kNone) slimecclCommAbort(comm);
    throw;
  }
  switch (teardown) {
    case Teardown::kFinalizeAndDestroy: {
      slimecclResult_t finalized = slimecclCommFinalize(comm);
      if (finalized != slimecclSuccess) {
        std::string error = lastErrorText(comm);
        slimecclCommAbort(comm);
        failRank(__FILE__, __LINE__,
                 concat("slimecclCommFinalize returned ", resultName(finalized), "; last error: ", error));
      }
      RANK_CHECK_SUCCESS(slimecclCommDestroy(comm), nullptr);
      break;
    }
    case Teardown::kAbort: RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr); break;
    case Teardown::kNone: break;
  }
}

// Runs body(rank) on one thread per rank and reports each rank's failure. A thread stuck past
// the deadline cannot be reclaimed, so the process ends with a message naming the stuck ranks.
void runOnThreads(int nranks, std::chrono::seconds deadline, const std::function<void(int)>& body) {
  std::mutex mutex;
  std::condition_variable finishedChanged;
  int finished = 0;
  std::vector<std::string> failures(nranks);
  std::vector<bool> done(nranks, false);
  std::vector<std::thread> threads;
  threads.reserve(nranks);
  for (int rank = 0; rank < nranks; ++rank) {
    threads.emplace_back([&, rank] {
      std::string failure = failureOf([&] { body(rank); });
      std::lock_guard lock(mutex);
      failures[rank] = std::move(failure);
      done[rank] = true;
      ++finished;
      finishedChanged.notify_all();
    });
  }
  {
    std::unique_lock lock(mutex);
    if (!finishedChanged.wait_until(lock, Clock::now() + deadline, [&] { return finished == nranks; })) {
      std::string report;
      for (int rank = 0; rank < nranks; ++rank) {
        if (!done[rank])
          report += concat("rank ", rank, " still running after ", deadline.count(), " s\n");
        else if (!failures[rank].empty())
          report += concat("rank ", rank, ": ", failures[rank], "\n");
      }
      const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
      std::fprintf(stderr, "%s: ending the test process because thread ranks are stuck\n%s",
                   test != nullptr ? test->name() : "harness", report.c_str());
      std::fflush(stderr);
      std::_Exit(EXIT_FAILURE);
    }
  }
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < nranks; ++rank) {
    if (!failures[rank].empty()) ADD_FAILURE() << "rank " << rank << " of " << nranks << ": " << failures[rank];
  }
}

struct Pipe {
  int readFd = -1;
  int writeFd = -1;
};

void closeFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

bool writeAll(int fd, const void* data, size_t bytes) {
  const auto* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t written = write(fd, cursor, bytes);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    cursor += written;
    bytes -= static_cast<size_t>(written);
  }
  return true;
}

bool readAll(int fd, void* data, size_t bytes) {
  auto* cursor = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = read(fd, cursor, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    cursor += got;
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

[[noreturn]] void exitChild(int reportFd, const std::string& failure, int code) {
  if (!failure.empty()) writeAll(reportFd, failure.data(), std::min(failure.size(), kMaxReportBytes));
  std::fflush(nullptr);
  _exit(code);
}

// The whole life of one forked rank; never returns.
[[noreturn]] void runChild(int rank, int nranks, pid_t parent, std::vector<Pipe>& idPipes,
                           std::vector<Pipe>& reportPipes, const std::map<std::string, std::string>& env,
                           const RawRankFn& fn) {
  // Die with the parent, so a parent killed by ctest's timeout leaves no ranks behind.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kChildSetupExit);

  for (int other = 0; other < nranks; ++other) {
    closeFd(reportPipes[other].readFd);
    if (other != rank) closeFd(reportPipes[other].writeFd);
    if (rank != 0) closeFd(idPipes[other].writeFd);
    if (other != rank) closeFd(idPipes[other].readFd);
  }
  const int reportFd = reportPipes[rank].writeFd;

  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);

  slimecclUniqueId id{};
  if (rank == 0) {
    slimecclResult_t made = slimecclGetUniqueId(&id);
    if (made != slimecclSuccess) {
      exitChild(reportFd,
                concat("slimecclGetUniqueId returned ", resultName(made), "; last error: ", lastErrorText(nullptr)),
                kChildFailedExit);
    }
    for (int other = 1; other < nranks; ++other) {
      if (!writeAll(idPipes[other].writeFd, &id, sizeof(id)))
        exitChild(reportFd, concat("could not pass the unique id to rank ", other), kChildSetupExit);
      closeFd(idPipes[other].writeFd);
    }
  } else if (!readAll(idPipes[rank].readFd, &id, sizeof(id))) {
    exitChild(reportFd, "never received the unique id from rank 0", kChildSetupExit);
  }

  std::string failure = failureOf([&] { fn(rank, nranks, id); });
  exitChild(reportFd, failure, failure.empty() ? EXIT_SUCCESS : kChildFailedExit);
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return concat("exited with code ", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return concat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  return concat("ended with wait status ", status);
}

std::string drainReport(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::string report;
  char chunk[1024];
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    report.append(chunk, static_cast<size_t>(got));
  }
  return report;
}

}  // namespace

void runThreadsRaw(int nranks, const RawRankFn& fn, const RunOptions& options) {
  ScopedEnv env(envWithDefaults(options.env));
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  runOnThreads(nranks, options.deadline, [&](int rank) { fn(rank, nranks, id); });
}

void runThreads(int nranks, const RankFn& fn, const RunOptions& options) {
  runThreadsRaw(
      nranks,
      [&](int rank, int size, const slimecclUniqueId& id) {
        runOnComm(rank, initRank(size, id, rank, options), fn, options.teardown);
      },
      options);
}

void runThreadsInitAll(int nranks, const RankFn& fn, const RunOptions& options) {
  ScopedEnv env(envWithDefaults(options.env));
  std::vector<slimecclComm_t> comms(nranks, nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommInitAll(comms.data(), nranks, nullptr)) << lastErrorText(nullptr);
  runOnThreads(nranks, options.deadline, [&](int rank) {
    RANK_CHECK(comms[rank] != nullptr, "slimecclCommInitAll left comms[", rank, "] NULL");
    runOnComm(rank, comms[rank], fn, options.teardown);
  });
}

void runForkedRaw(int nranks, const RawRankFn& fn, const RunOptions& options) {
  const std::map<std::string, std::string> env = envWithDefaults(options.env);
  std::vector<Pipe> idPipes(nranks);
  std::vector<Pipe> reportPipes(nranks);
  for (int rank = 0; rank < nranks; ++rank) {
    int idFds[2];
    int reportFds[2];
    ASSERT_EQ(0, pipe(idFds)) << std::strerror(errno);
    ASSERT_EQ(0, pipe(reportFds)) << std::strerror(errno);
    idPipes[rank] = {idFds[0], idFds[1]};
    reportPipes[rank] = {reportFds[0], reportFds[1]};
  }

  // Unflushed output would otherwise be printed once by every child.
  std::fflush(nullptr);
  const pid_t parent = getpid();
  std::vector<pid_t> pids(nranks, -1);
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) runChild(rank, nranks, parent, idPipes, reportPipes, env, fn);
    if (pid < 0) {
      ADD_FAILURE() << "fork for rank " << rank << ": " << std::strerror(errno);
      break;
    }
    pids[rank] = pid;
  }
  for (int rank = 0; rank < nranks; ++rank) {
    closeFd(idPipes[rank].readFd);
    closeFd(idPipes[rank].writeFd);
    closeFd(reportPipes[rank].writeFd);
  }

  std::vector<std::optional<int>> statuses(nranks);
  std::vector<std::string> stopReasons(nranks);
  int running = static_cast<int>(std::count_if(pids.begin(), pids.end(), [](pid_t pid) { return pid > 0; }));
  auto deadline = Clock::now() + options.deadline;
  std::string firstFailure;
  while (running > 0) {
    for (int rank = 0; rank < nranks; ++rank) {
      int status = 0;
      if (pids[rank] <= 0 || statuses[rank] || waitpid(pids[rank], &status, WNOHANG) != pids[rank]) continue;
      statuses[rank] = status;
      --running;
      bool clean = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SUCCESS;
      if (!clean && firstFailure.empty()) {
        firstFailure = concat("rank ", rank, " failed");
        deadline = std::min(deadline, Clock::now() + kGraceAfterFailure);
      }
    }
    if (running == 0) break;
    if (Clock::now() >= deadline) {
      for (int rank = 0; rank < nranks; ++rank) {
        if (pids[rank] <= 0 || statuses[rank]) continue;
        kill(pids[rank], SIGKILL);
        int status = 0;
        waitpid(pids[rank], &status, 0);
        statuses[rank] = status;
        stopReasons[rank] =
            firstFailure.empty()
                ? concat("still running after ", options.deadline.count(), " s; killed")
                : concat("still running ", kGraceAfterFailure.count(), " s after ", firstFailure, "; killed");
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  for (int rank = 0; rank < nranks; ++rank) {
    std::string report = drainReport(reportPipes[rank].readFd);
    closeFd(reportPipes[rank].readFd);
    if (!statuses[rank]) continue;
    int status = *statuses[rank];
    bool clean = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SUCCESS;
    if (clean && stopReasons[rank].empty()) continue;
    std::string what = !stopReasons[rank].empty() ? stopReasons[rank] : describeExit(status);
    ADD_FAILURE() << "rank " << rank << " of " << nranks << " (pid " << pids[rank] << ") " << what
                  << (report.empty() ? "" : ": ") << report;
  }
}

void runForked(int nranks, const RankFn& fn, const RunOptions& options) {
  runForkedRaw(
      nranks,
      [&](int rank, int size, const slimecclUniqueId& id) {
        runOnComm(rank, initRank(size, id, rank, options), fn, options.teardown);
      },
      options);
}

const char* launchName(Launch launch) {
  switch (launch) {
    case Launch::kForkedShm: return "forked_shm";
    case Launch::kForkedSocket: return "forked_socket";
    case Launch::kThreads: return "threads";
    case Launch::kThreadsInitAll: return "threads_init_all";
  }
  return "unknown";
}

void runRanks(Launch launch, int nranks, const RankFn& fn, RunOptions options) {
  switch (launch) {
    case Launch::kForkedShm:
      options.env.emplace("SLIMECCL_NET", "shm");
      runForked(nranks, fn, options);
      return;
    case Launch::kForkedSocket:
      options.env.emplace("SLIMECCL_NET", "socket");
      runForked(nranks, fn, options);
      return;
    case Launch::kThreads: runThreads(nranks, fn, options); return;
    case Launch::kThreadsInitAll: runThreadsInitAll(nranks, fn, options); return;
  }
}

void runRanksRaw(Launch launch, int nranks, const RawRankFn& fn, RunOptions options) {
  switch (launch) {
    case Launch::kForkedShm:
      options.env.emplace("SLIMECCL_NET", "shm");
      runForkedRaw(nranks, fn, options);
      return;
    case Launch::kForkedSocket:
      options.env.emplace("SLIMECCL_NET", "socket");
      runForkedRaw(nranks, fn, options);
      return;
    case Launch::kThreads:
    case Launch::kThreadsInitAll: runThreadsRaw(nranks, fn, options); return;
  }
}

void withComm(int rank, int nranks, const slimecclUniqueId& id, const std::function<void(slimecclComm_t)>& body) {
  slimecclComm_t comm = initRank(nranks, id, rank, RunOptions{});
  runOnComm(
      rank, comm, [&](int, slimecclComm_t c) { body(c); }, Teardown::kFinalizeAndDestroy);
}

int commSize(slimecclComm_t comm) {
  int size = -1;
  RANK_CHECK_SUCCESS(slimecclCommCount(comm, &size), comm);
  return size;
}

int commRank(slimecclComm_t comm) {
  int rank = -1;
  RANK_CHECK_SUCCESS(slimecclCommUserRank(comm, &rank), comm);
  return rank;
}

}  // namespace slimeccl_test
