#include "forked_ranks.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace slimeccl_test {
namespace {

using Clock = std::chrono::steady_clock;

bool writeAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void runRank(int rank, int nranks, int idPipe[2], int reportFd, const RankBody& body,
                          const RankSetup& setup) {
  if (setup) setup(rank);
  slimecclUniqueId id;
  if (rank == 0) {
    if (slimecclGetUniqueId(&id) != slimecclSuccess) _exit(10);
    for (int r = 1; r < nranks; ++r)
      if (!writeAll(idPipe[1], &id, sizeof(id))) _exit(11);
  } else if (read(idPipe[0], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) {
    _exit(12);
  }
  slimecclComm_t comm = nullptr;
  auto start = Clock::now();
  int code = slimecclCommInitRank(&comm, nranks, id, rank);
  std::string error = code == slimecclSuccess ? "" : std::string("init failed: ") + slimecclGetLastError(nullptr);
  if (code == slimecclSuccess) {
    start = Clock::now();
    code = body(rank, comm);
    error = slimecclGetLastError(comm);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  uint32_t length = static_cast<uint32_t>(error.size());
  bool sent = writeAll(reportFd, &code, sizeof(code)) && writeAll(reportFd, &seconds, sizeof(seconds)) &&
              writeAll(reportFd, &length, sizeof(length)) && writeAll(reportFd, error.data(), length);
  if (comm != nullptr) slimecclCommDestroy(comm);
  _exit(sent ? 0 : 14);
}

// Reads exactly size bytes unless the deadline passes first.
bool readAll(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || poll(&pfd, 1, left) <= 0) return false;
    ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::vector<RankReport> runForkedRanks(int nranks, const RankBody& body, int deadlineSeconds, const RankSetup& setup) {
  int idPipe[2];
  if (pipe(idPipe) != 0) return std::vector<RankReport>(nranks);
  std::vector<int> reportFds(nranks, -1);
  std::vector<pid_t> pids(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    int report[2];
    if (pipe(report) != 0) break;
    pids[r] = fork();
    if (pids[r] == 0) {
      close(report[0]);
      runRank(r, nranks, idPipe, report[1], body, setup);
    }
    close(report[1]);
    reportFds[r] = report[0];
  }
  close(idPipe[0]);
  close(idPipe[1]);
  auto deadline = Clock::now() + std::chrono::seconds(deadlineSeconds);
  std::vector<RankReport> reports(nranks);
  for (int r = 0; r < nranks; ++r) {
    if (reportFds[r] < 0) continue;
    RankReport& rep = reports[r];
    int code = 0;
    uint32_t length = 0;
    if (readAll(reportFds[r], &code, sizeof(code), deadline) &&
        readAll(reportFds[r], &rep.seconds, sizeof(rep.seconds), deadline) &&
        readAll(reportFds[r], &length, sizeof(length), deadline) && length < (1u << 20)) {
      rep.error.resize(length);
      rep.reported = readAll(reportFds[r], rep.error.data(), length, deadline);
      rep.result = static_cast<slimecclResult_t>(code);
    }
    close(reportFds[r]);
  }
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    int status = 0;
    // Ranks that reported exit at once; any other is stuck or dead: stop it.
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20 * 1000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  return reports;
}

}  // namespace slimeccl_test
