// Soak test: a long random mix of AllGather, grouped Send/Recv with random pairings and orders, and
// CommSplit/Finalize/Destroy of sub-communicators, on forked ranks over shared memory, checking
// every byte received. Exits 0 when every rank passed (and, in sanitizer builds, exited clean).
//   slimeccl-soak [--ops N] [--ranks R] [--seed S] [--net NAME] [--deadline SECONDS]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "soak_plan.h"
#include "soak_rank.h"

namespace {

using namespace slimeccl_soak;
using Clock = std::chrono::steady_clock;

struct Options {
  int ops = 2000;
  int ranks = 4;
  uint64_t seed = 20240601;
  std::string net = "shm";
  int deadlineSeconds = 150;
};

// Once a rank has failed, the others get this long to notice (a RemoteError) before they are killed.
constexpr int kGraceSeconds = 20;

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--ops")
      o->ops = std::stoi(value);
    else if (flag == "--ranks")
      o->ranks = std::stoi(value);
    else if (flag == "--seed")
      o->seed = std::stoull(value);
    else if (flag == "--net")
      o->net = value;
    else if (flag == "--deadline")
      o->deadlineSeconds = std::stoi(value);
    else
      return false;
  }
  return argc % 2 == 1 && o->ops > 0 && o->ranks > 0;
}

// The life of one forked rank: rank 0 makes the unique id and hands it to the others.
[[noreturn]] void rankProcess(const Plan& plan, const Options& o, int rank, const std::vector<int>& idPipes) {
  slimecclUniqueId id;
  if (rank == 0) {
    if (slimecclGetUniqueId(&id) != slimecclSuccess) {
      fprintf(stderr, "soak rank 0: slimecclGetUniqueId failed: %s\n", slimecclGetLastError(nullptr));
      exit(1);
    }
    for (int r = 1; r < o.ranks; ++r)
      if (write(idPipes[2 * r + 1], &id, sizeof(id)) != sizeof(id)) exit(1);
  } else if (read(idPipes[2 * rank], &id, sizeof(id)) != sizeof(id)) {
    fprintf(stderr, "soak rank %d: no unique id from rank 0\n", rank);
    exit(1);
  }
  RankResult result = runRank(plan, rank, o.ranks, id, o.seed);
  printf("soak rank %d: %s after %d ops, %llu bytes checked\n", rank, result.passed ? "passed" : "FAILED",
         result.opsRun, static_cast<unsigned long long>(result.bytesChecked));
  fflush(stdout);
  // exit, not _exit: a sanitizer build checks for leaks at exit.
  exit(result.passed ? 0 : 1);
}

// Waits for every rank; returns the number that failed or had to be killed.
int waitForRanks(std::vector<pid_t>& pids, const Options& o, Clock::time_point start) {
  int failed = 0, left = static_cast<int>(pids.size());
  Clock::time_point killAt = start + std::chrono::seconds(o.deadlineSeconds);
  while (left > 0) {
    for (size_t r = 0; r < pids.size(); ++r) {
      int status = 0;
      if (pids[r] <= 0 || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      pids[r] = 0;
      --left;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      ++failed;
      if (WIFEXITED(status))
        fprintf(stderr, "soak: rank %zu exited with status %d\n", r, WEXITSTATUS(status));
      else
        fprintf(stderr, "soak: rank %zu died of signal %d\n", r, WTERMSIG(status));
      killAt = std::min(killAt, Clock::now() + std::chrono::seconds(kGraceSeconds));
    }
    if (left > 0 && Clock::now() >= killAt) {
      for (size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] <= 0) continue;
        fprintf(stderr, "soak: rank %zu did not finish in time; killed\n", r);
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        pids[r] = 0;
        ++failed;
      }
      return failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    fprintf(stderr, "usage: %s [--ops N] [--ranks R] [--seed S] [--net NAME] [--deadline SECONDS]\n", argv[0]);
    return 2;
  }
  setenv("SLIMECCL_NET", o.net.c_str(), 1);
  // A stuck op becomes a Timeout with a sentence, well before the deadline.
  setenv("SLIMECCL_TIMEOUT_MS", "30000", 0);
  Plan plan = makePlan(o.seed, o.ranks, o.ops);
  PlanCounts counts = countOps(plan);
  printf(
      "soak: %d ops on %d ranks over %s, seed %llu: %d AllGather, %d groups (%d Send/Recv pairs), %d splits, "
      "%d destroys\n",
      o.ops, o.ranks, o.net.c_str(), static_cast<unsigned long long>(o.seed), counts.allGathers, counts.groups,
      counts.messages, counts.splits, counts.destroys);
  fflush(stdout);

  std::vector<int> idPipes(2 * o.ranks, -1);
  for (int r = 1; r < o.ranks; ++r)
    if (pipe(&idPipes[2 * r]) != 0) return 1;
  Clock::time_point start = Clock::now();
  std::vector<pid_t> pids(o.ranks, 0);
  for (int r = 0; r < o.ranks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) rankProcess(plan, o, r, idPipes);
    if (pids[r] < 0) {
      perror("fork");
      return 1;
    }
  }
  int failed = waitForRanks(pids, o, start);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  printf("soak: %d ranks passed, %d failed, in %.1f s\n", o.ranks - failed, failed, seconds);
  return failed == 0 ? 0 : 1;
}
