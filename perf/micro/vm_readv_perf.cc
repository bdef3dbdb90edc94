// What the kernel's single copy between processes can do on this machine, as a reference for
// large Send/Recv over shm: P processes in a ring, each copying a block of its left neighbour's
// memory into its own with process_vm_readv, all at once (the pattern of a sendrecv_perf ring).
// Prints per size the mean time of one copy and its rate, in the rows of the perf tools.
//
//   vm_readv_perf [-p PROCS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/options.h"

namespace {

struct Settings {
  int procs = 2;
  size_t minBytes = 8;
  size_t maxBytes = 128 << 20;
  size_t factor = 2;
  int iters = 20;
  int warmup = 2;
};

constexpr int kMaxProcs = 64;

// Lives in a shared mapping made before fork.
struct Shared {
  pthread_barrier_t barrier;
  pid_t pids[kMaxProcs];
  uintptr_t sources[kMaxProcs];
  double seconds[kMaxProcs];
  int failed;
};

[[noreturn]] void usage(const char* why) {
  fprintf(stderr,
          "vm_readv_perf: %s\nusage: vm_readv_perf [-p PROCS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]\n",
          why);
  exit(2);
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "-p")
      s.procs = atoi(value);
    else if (flag == "-b")
      s.minBytes = slimeccl_perf::parseSize(value);
    else if (flag == "-e")
      s.maxBytes = slimeccl_perf::parseSize(value);
    else if (flag == "-f")
      s.factor = slimeccl_perf::parseSize(value);
    else if (flag == "-n")
      s.iters = atoi(value);
    else if (flag == "-w")
      s.warmup = atoi(value);
    else
      usage(("unknown flag " + flag).c_str());
  }
  if (s.procs < 2 || s.procs > kMaxProcs) usage("-p must be 2 to 64");
  if (s.minBytes == 0 || s.minBytes > s.maxBytes || s.factor < 2 || s.iters < 1 || s.warmup < 0)
    usage("need 0 < MIN <= MAX, FACTOR >= 2, ITERS >= 1, WARMUP >= 0");
  return s;
}

// Copies `bytes` from the peer's address into `into`, through partial transfers.
bool readFrom(pid_t peer, uintptr_t from, char* into, size_t bytes) {
  for (size_t done = 0; done < bytes;) {
    iovec local{into + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(from + done), bytes - done};
    ssize_t n = process_vm_readv(peer, &local, 1, &remote, 1, 0);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void runProcess(Shared* shared, const Settings& s, int index) {
  std::vector<char> source(s.maxBytes, static_cast<char>(index + 1)), target(s.maxBytes);
  shared->pids[index] = getpid();
  shared->sources[index] = reinterpret_cast<uintptr_t>(source.data());
  pthread_barrier_wait(&shared->barrier);
  int left = (index + s.procs - 1) % s.procs;
  for (size_t bytes = s.minBytes; bytes <= s.maxBytes; bytes *= s.factor) {
    bool ok = true;
    for (int i = 0; i < s.warmup; ++i) ok &= readFrom(shared->pids[left], shared->sources[left], target.data(), bytes);
    pthread_barrier_wait(&shared->barrier);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < s.iters; ++i) ok &= readFrom(shared->pids[left], shared->sources[left], target.data(), bytes);
    shared->seconds[index] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / s.iters;
    if (!ok || target[bytes - 1] != static_cast<char>(left + 1)) shared->failed = 1;
    pthread_barrier_wait(&shared->barrier);
    if (index == 0) {
      double mean = 0;
      for (int i = 0; i < s.procs; ++i) mean += shared->seconds[i] / s.procs;
      printf("  %10zu %10.2f %8.2f\n", bytes, mean * 1e6, static_cast<double>(bytes) / mean / 1e9);
      fflush(stdout);
    }
    pthread_barrier_wait(&shared->barrier);  // the row is printed before the next size starts
    if (bytes > s.maxBytes / s.factor) break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s = parse(argc, argv);
  void* mapping = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) usage("cannot map the shared page");
  auto* shared = new (mapping) Shared{};
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&shared->barrier, &attr, static_cast<unsigned>(s.procs));
  printf("# process_vm_readv: %d processes in a ring, each copying from its left neighbour at once\n", s.procs);
  printf("# %10s %10s %8s\n", "size(B)", "time(us)", "GB/s");
  fflush(stdout);
  std::vector<pid_t> children;
  for (int i = 1; i < s.procs; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      runProcess(shared, s, i);
      _exit(0);
    }
    children.push_back(pid);
  }
  runProcess(shared, s, 0);  // the first process prints the rows
  int status = 0;
  for (pid_t pid : children) waitpid(pid, &status, 0);
  if (shared->failed) {
    fprintf(stderr, "vm_readv_perf: a copy failed or brought the wrong bytes\n");
    return 1;
  }
  return 0;
}
