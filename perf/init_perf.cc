// Init time in each way ranks are started: per round, the longest slimecclCommInitRank of its
// ranks; per launch pattern and rank count, the median and the worst of the rounds.
//
//   init_perf [-n 2,8,32,64] [-r ROUNDS] [-b BOUND_MS]
//
// Patterns: forked (a parent that is no rank makes the id, then forks every rank), rank0 (the
// maker of the id is rank 0 and forks the others), exec (the forked ranks exec this tool again and
// take the id from the environment), threads (the ranks are threads of one process). Every rank
// runs a one-element AllGather after its init, so that the comm is known to work. Exits 1 when a
// rank failed, or when a round's longest init exceeded BOUND_MS (a test of the 5 s that forked
// ranks once waited for a copy of the root).
#include <slimeccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "src/base/util/version_line.h"
#include "common/timing.h"

namespace {

constexpr const char* kIdVariable = "INIT_PERF_UNIQUE_ID";
constexpr const char* kPatterns[] = {"forked", "rank0", "exec", "threads"};

struct Report {
  int rank;
  double seconds;  // < 0: the rank failed
};

// One rank: init (timed), a checked AllGather, destroy.
Report liveRank(int rank, int nranks, const slimecclUniqueId& id) {
  const auto start = std::chrono::steady_clock::now();
  slimecclComm_t comm = nullptr;
  const slimecclResult_t made = slimecclCommInitRank(&comm, nranks, id, rank);
  Report report{rank, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  if (made != slimecclSuccess) {
    fprintf(stderr, "init_perf: rank %d: %s\n", rank, slimecclGetLastError(nullptr));
    return {rank, -1};
  }
  std::vector<int> all(static_cast<size_t>(nranks), -1);
  bool right = slimecclAllGather(&rank, all.data(), 1, slimecclInt32, comm, nullptr) == slimecclSuccess;
  for (int r = 0; r < nranks; ++r) right = right && all[static_cast<size_t>(r)] == r;
  if (!right) {
    fprintf(stderr, "init_perf: rank %d: the AllGather after init failed: %s\n", rank, slimecclGetLastError(comm));
    report.seconds = -1;
  }
  slimecclCommDestroy(comm);
  return report;
}

std::string toHex(const slimecclUniqueId& id) {
  std::string hex;
  char pair[3];
  for (unsigned char byte : id.internal) {
    snprintf(pair, sizeof(pair), "%02x", byte);
    hex += pair;
  }
  return hex;
}

bool fromHex(const char* hex, slimecclUniqueId* id) {
  if (hex == nullptr || strlen(hex) != 2 * sizeof(id->internal)) return false;
  for (size_t i = 0; i < sizeof(id->internal); ++i) {
    unsigned value = 0;
    if (sscanf(hex + 2 * i, "%2x", &value) != 1) return false;
    id->internal[i] = static_cast<char>(value);
  }
  return true;
}

// A forked rank: runs (or, for exec, execs this tool to run) the rank and reports on `fd`.
[[noreturn]] void forkedRank(const char* pattern, int rank, int nranks, const slimecclUniqueId& id, int fd) {
  if (strcmp(pattern, "exec") == 0) {
    const std::string rankArg = std::to_string(rank), nranksArg = std::to_string(nranks), fdArg = std::to_string(fd);
    setenv(kIdVariable, toHex(id).c_str(), 1);
    execl("/proc/self/exe", "init_perf", "--rank", rankArg.c_str(), nranksArg.c_str(), fdArg.c_str(), nullptr);
    _exit(2);
  }
  const Report report = liveRank(rank, nranks, id);
  _exit(write(fd, &report, sizeof(report)) == sizeof(report) && report.seconds >= 0 ? 0 : 1);
}

// One round: the longest init of its ranks, or < 0 when one failed.
double oneRound(const char* pattern, int nranks) {
  slimecclUniqueId id;
  if (slimecclGetUniqueId(&id) != slimecclSuccess) return -1;
  std::vector<Report> reports;
  if (strcmp(pattern, "threads") == 0) {
    reports.resize(static_cast<size_t>(nranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < nranks; ++r)
      threads.emplace_back([&, r] { reports[static_cast<size_t>(r)] = liveRank(r, nranks, id); });
    for (std::thread& t : threads) t.join();
  } else {
    int pipeFds[2];
    if (pipe(pipeFds) != 0) return -1;
    const int first = strcmp(pattern, "rank0") == 0 ? 1 : 0;
    std::vector<pid_t> children;
    for (int r = first; r < nranks; ++r) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(pipeFds[0]);
        forkedRank(pattern, r, nranks, id, pipeFds[1]);
      }
      if (pid > 0) children.push_back(pid);
    }
    if (first == 1) reports.push_back(liveRank(0, nranks, id));
    close(pipeFds[1]);
    Report report;
    while (read(pipeFds[0], &report, sizeof(report)) == sizeof(report)) reports.push_back(report);
    close(pipeFds[0]);
    for (const pid_t pid : children) waitpid(pid, nullptr, 0);
  }
  if (static_cast<int>(reports.size()) != nranks) return -1;
  double longest = 0;
  for (const Report& report : reports) {
    if (report.seconds < 0) return -1;
    longest = std::max(longest, report.seconds);
  }
  return longest;
}

std::vector<int> parseCounts(const char* list) {
  std::vector<int> counts;
  for (const char* p = list; *p != '\0';) {
    char* end = nullptr;
    const long value = strtol(p, &end, 10);
    if (end == p || value < 1 || value > 1024) return {};
    counts.push_back(static_cast<int>(value));
    p = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return {};
  }
  return counts;
}

int usage() {
  fprintf(stderr, "usage: init_perf [-n 2,8,32,64] [-r ROUNDS] [-b BOUND_MS] | --version\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // An exec'd rank: init_perf --rank RANK NRANKS FD, with the id in the environment.
  if (argc == 5 && strcmp(argv[1], "--rank") == 0) {
    slimecclUniqueId id;
    if (!fromHex(getenv(kIdVariable), &id)) return 2;
    const Report report = liveRank(atoi(argv[2]), atoi(argv[3]), id);
    return write(atoi(argv[4]), &report, sizeof(report)) == sizeof(report) && report.seconds >= 0 ? 0 : 1;
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    fputs(slimeccl::versionLine("init_perf").c_str(), stdout);
    return 0;
  }
  std::vector<int> counts = {2, 8, 32, 64};
  int rounds = 3;
  double boundMs = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
      counts = parseCounts(argv[++i]);
    else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc)
      boundMs = atof(argv[++i]);
    else
      return usage();
  }
  if (counts.empty() || rounds < 1) return usage();
  setenv("SLIMECCL_TIMEOUT_MS", "20000", 0);
  int status = 0;
  printf("# init time: per round the longest init of its ranks; median and worst of %d rounds\n", rounds);
  printf("%-8s %6s %12s %12s\n", "# launch", "ranks", "median_ms", "worst_ms");
  for (const char* pattern : kPatterns) {
    for (const int nranks : counts) {
      std::vector<double> longest;
      for (int r = 0; r < rounds; ++r) {
        const double seconds = oneRound(pattern, nranks);
        if (seconds < 0) {
          status = 1;
          continue;
        }
        longest.push_back(seconds * 1e3);
      }
      if (longest.empty()) {
        printf("%-8s %6d %12s %12s\n", pattern, nranks, "failed", "failed");
        continue;
      }
      const double worst = *std::max_element(longest.begin(), longest.end());
      if (boundMs > 0 && worst > boundMs) {
        fprintf(stderr, "init_perf: %s, %d ranks: an init took %.1f ms, past the bound of %.0f ms\n", pattern, nranks,
                worst, boundMs);
        status = 1;
      }
      printf("%-8s %6d %12.1f %12.1f%s\n", pattern, nranks, slimeccl_perf::medianOf(longest), worst,
             static_cast<int>(longest.size()) < rounds ? "  (some rounds failed)" : "");
      fflush(stdout);
    }
  }
  return status;
}
