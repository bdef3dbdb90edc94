// One-way figures over the public API, shaped like perftest's so that they sit beside
// ib_write_lat and ib_write_bw: rank 0 and rank 1 only.
//   lat: ping-pong of Send/Recv; half the round trip per size (ib_write_lat's t_typical/t_avg).
//   bw:  rank 0 streams messages to rank 1, `depth` of them per group so that they are in flight
//        together (as ib_write_bw keeps its tx depth); MB/s = 10^6 bytes per second. The messages
//        of a group cycle through `buffers` buffers on each side (default: one per message);
//        `-B 1` sends every message from one buffer into one buffer, as ib_write_bw does.
//
// Usage: rdma_pingpong_perf lat|bw [--devices rxe_a,rxe_b] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS]
//        [-w WARMUP] [-d DEPTH] [-B BUFFERS]
#include <slimeccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rank_setup.h"
#include "tick_timer.h"

namespace {

using namespace rdma_test;

constexpr const char* kProgram = "rdma_pingpong_perf";

struct Options {
  std::string mode;
  std::string devices;
  size_t minBytes = 8;
  size_t maxBytes = 8;
  size_t factor = 2;
  int iters = 1000;
  int warmup = 100;
  int depth = 16;
  int buffers = 0;  // 0: as many as depth
};

void check(int rank, slimecclResult_t rc, const char* call, slimecclComm_t comm) {
  requireSuccess(kProgram, rank, rc, call, comm);
}

// Half round trips of `iters` ping-pongs, in microseconds: typical (median) and average.
std::pair<double, double> pingPong(slimecclComm_t comm, int rank, char* buf, size_t bytes, int iters) {
  std::vector<double> halves;
  halves.reserve(iters);
  int peer = 1 - rank;
  TickTimer timer;
  for (int i = 0; i < iters; ++i) {
    uint64_t t0 = TickTimer::ticks();
    if (rank == 0) {
      check(rank, slimecclSend(buf, bytes, slimecclChar, peer, comm, nullptr), "slimecclSend", comm);
      check(rank, slimecclRecv(buf, bytes, slimecclChar, peer, comm, nullptr), "slimecclRecv", comm);
    } else {
      check(rank, slimecclRecv(buf, bytes, slimecclChar, peer, comm, nullptr), "slimecclRecv", comm);
      check(rank, slimecclSend(buf, bytes, slimecclChar, peer, comm, nullptr), "slimecclSend", comm);
    }
    halves.push_back(static_cast<double>(TickTimer::ticks() - t0) / 2);
  }
  double usPerTick = timer.usPerTick();
  double sum = 0;
  for (double& h : halves) {
    h *= usPerTick;
    sum += h;
  }
  std::nth_element(halves.begin(), halves.begin() + halves.size() / 2, halves.end());
  return {halves[halves.size() / 2], sum / halves.size()};
}

// Seconds for `iters` messages of `bytes` from rank 0 to rank 1, `depth` per group.
double stream(slimecclComm_t comm, int rank, std::vector<char*>& bufs, size_t bytes, int iters, int depth) {
  double t0 = nowSeconds();
  for (int done = 0; done < iters;) {
    int batch = std::min(depth, iters - done);
    check(rank, slimecclGroupStart(), "slimecclGroupStart", comm);
    for (int k = 0; k < batch; ++k) {
      char* buf = bufs[k % bufs.size()];
      slimecclResult_t rc = rank == 0 ? slimecclSend(buf, bytes, slimecclChar, 1, comm, nullptr)
                                      : slimecclRecv(buf, bytes, slimecclChar, 0, comm, nullptr);
      check(rank, rc, rank == 0 ? "slimecclSend" : "slimecclRecv", comm);
    }
    check(rank, slimecclGroupEnd(), "slimecclGroupEnd", comm);
    done += batch;
  }
  // The receiver's end is the end of the transfer: a one-byte reply closes the measurement.
  char ack = 0;
  check(rank,
        rank == 0 ? slimecclRecv(&ack, 1, slimecclChar, 1, comm, nullptr)
                  : slimecclSend(&ack, 1, slimecclChar, 0, comm, nullptr),
        "ack", comm);
  return nowSeconds() - t0;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) return o;
  o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--devices")
      o.devices = value;
    else if (flag == "-b")
      o.minBytes = strtoull(value, nullptr, 0);
    else if (flag == "-e")
      o.maxBytes = strtoull(value, nullptr, 0);
    else if (flag == "-f")
      o.factor = strtoull(value, nullptr, 0);
    else if (flag == "-n")
      o.iters = atoi(value);
    else if (flag == "-w")
      o.warmup = atoi(value);
    else if (flag == "-d")
      o.depth = atoi(value);
    else if (flag == "-B")
      o.buffers = atoi(value);
    else
      o.mode.clear();
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if ((o.mode != "lat" && o.mode != "bw") || o.factor < 2 || o.iters < 1 || o.depth < 1 || o.buffers < 0) {
    fprintf(stderr,
            "usage: %s lat|bw [--devices D0,D1] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-d DEPTH] "
            "[-B BUFFERS]\n",
            argv[0]);
    return 2;
  }
  RankEnv env = rankEnvFromLauncher();
  if (env.nranks != 2) failRank(kProgram, env.rank, "needs exactly 2 ranks");
  chooseByRank("SLIMECCL_IB_HCA", o.devices, env.rank);
  slimecclComm_t comm = joinComm(env, kProgram);
  std::vector<char*> bufs(o.mode == "bw" ? (o.buffers > 0 ? std::min(o.buffers, o.depth) : o.depth) : 1);
  for (char*& b : bufs) {
    b = static_cast<char*>(aligned_alloc(4096, (o.maxBytes + 4095) / 4096 * 4096 + 4096));
    memset(b, env.rank, o.maxBytes);
  }
  if (env.rank == 0)
    printf("#%11s %12s %14s %12s\n", "bytes", "iterations", o.mode == "lat" ? "t_typical[us]" : "seconds",
           o.mode == "lat" ? "t_avg[us]" : "MB/s");
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= o.factor) {
    if (o.mode == "lat") {
      pingPong(comm, env.rank, bufs[0], bytes, o.warmup);
      auto [typical, average] = pingPong(comm, env.rank, bufs[0], bytes, o.iters);
      if (env.rank == 0) printf(" %11zu %12d %14.2f %12.2f\n", bytes, o.iters, typical, average);
    } else {
      stream(comm, env.rank, bufs, bytes, o.warmup, o.depth);
      double seconds = stream(comm, env.rank, bufs, bytes, o.iters, o.depth);
      if (env.rank == 0)
        printf(" %11zu %12d %14.3f %12.2f\n", bytes, o.iters, seconds, bytes * o.iters / seconds / 1e6);
    }
    fflush(stdout);
    if (bytes == 0) break;
  }
  for (char* b : bufs) free(b);
  check(env.rank, slimecclCommDestroy(comm), "slimecclCommDestroy", nullptr);
  return 0;
}
