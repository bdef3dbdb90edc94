// The ib module alone, without the executor above it: two processes (ranks 0 and 1), each with
// the module on a device of its own (--devices A,B sets SLIMECCL_IB_HCA per rank; otherwise both
// take the port topology places them on), connected both ways through the NetModule interface.
//   lat: 8-byte (or -s) ping-pong, busy-polling test(); half round trip as ib_write_lat reports.
//   bw:  rank 0 streams -s byte messages to rank 1 with -d in flight (ib_write_bw's tx depth).
// Comparing these with perftest on the same two devices shows what the module costs; comparing
// them with rdma_pingpong_perf shows what the layers above it cost. Two processes, not two
// threads: soft-RoCE runs a transfer between QPs of one device through its loopback path, which
// skips the network stack that perftest's pair of devices goes through.
//
// Usage: ib_module_perf lat|bw [--devices A,B] [-s BYTES] [-n ITERS] [-w WARMUP] [-d DEPTH]
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/net.h"
#include "net/bell.h"
#include "src/base/error.h"
#include "src/link/system_net_placement.h"
#include "src/base/sys/fd_io.h"
#include "src/base/sys/time.h"
#include "choose_by_rank.h"
#include "tick_timer.h"

namespace {

using namespace slimeccl;

struct Options {
  std::string mode;
  std::string devices;
  size_t bytes = 8;
  int iters = 2000;
  int warmup = 200;
  int depth = 16;
};

[[noreturn]] void die(const char* what) {
  fprintf(stderr, "ib_module_perf: %s: %s\n", what, threadError().c_str());
  exit(1);
}

void ok(slimecclResult_t rc, const char* what) {
  if (rc != slimecclSuccess) die(what);
}

// One side: a listener, its outgoing connection and the accepted incoming one.
struct Side {
  NetModule* net;
  NetContext ctx;
  std::unique_ptr<Bell> bell;
  void* listen = nullptr;
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE] = {};
  void* out = nullptr;
  void* in = nullptr;
};

void wait(NetModule* net, void* request) {
  bool done = false;
  size_t size = 0;
  while (!done) ok(net->test(request, &done, &size), "test");
}

void* post(NetModule* net, void* conn, bool send, void* data, size_t bytes) {
  void* request = nullptr;
  while (request == nullptr)
    ok(send ? net->isend(conn, data, bytes, &request) : net->irecv(conn, data, bytes, &request),
       send ? "isend" : "irecv");
  return request;
}

// The socket pair between the two ranks carries the listen handles and the start and end marks.
void sendBytes(int fd, const void* data, size_t bytes) {
  ok(writeFully(fd, data, bytes, Deadline::never(), nullptr), "writing to the other rank");
}

void recvBytes(int fd, void* data, size_t bytes) {
  ok(readFully(fd, data, bytes, Deadline::never(), nullptr), "reading from the other rank");
}

// Both ranks wait here until the other arrives.
void meet(int fd) {
  char mark = 0;
  sendBytes(fd, &mark, 1);
  recvBytes(fd, &mark, 1);
}

// Listens, swaps handles with the other rank, connects to its listener and accepts its connection.
void connectToPeer(Side& s, int fd) {
  ok(s.net->listen(s.ctx, s.handle, &s.listen), "listen");
  sendBytes(fd, s.handle, sizeof(s.handle));
  char peer[SLIMECCL_NET_HANDLE_MAXSIZE];
  recvBytes(fd, peer, sizeof(peer));
  ok(s.net->connect(s.ctx, peer, ConnKind::Data, &s.out), "connect");
  while (s.in == nullptr) ok(s.net->accept(s.listen, &s.in), "accept");
}

void pingPong(Side& s, int rank, char* buf, size_t bytes, int iters, std::vector<double>* halves) {
  rdma_test::TickTimer timer;
  for (int i = 0; i < iters; ++i) {
    uint64_t t0 = rdma_test::TickTimer::ticks();
    if (rank == 0) {
      wait(s.net, post(s.net, s.out, true, buf, bytes));
      wait(s.net, post(s.net, s.in, false, buf, bytes));
    } else {
      wait(s.net, post(s.net, s.in, false, buf, bytes));
      wait(s.net, post(s.net, s.out, true, buf, bytes));
    }
    if (halves != nullptr) halves->push_back(static_cast<double>(rdma_test::TickTimer::ticks() - t0) / 2);
  }
  if (halves != nullptr)
    for (double& h : *halves) h *= timer.usPerTick();
}

double stream(Side& s, int rank, std::vector<std::vector<char>>& bufs, size_t bytes, int iters, int depth) {
  int64_t start = nowNs();
  std::vector<void*> inflight;
  for (int posted = 0, done = 0; done < iters;) {
    while (posted < iters && static_cast<int>(inflight.size()) < depth) {
      char* b = bufs[posted % depth].data();
      inflight.push_back(post(s.net, rank == 0 ? s.out : s.in, rank == 0, b, bytes));
      ++posted;
    }
    wait(s.net, inflight.front());
    inflight.erase(inflight.begin());
    ++done;
  }
  char ack = 0;
  wait(s.net, post(s.net, rank == 0 ? s.in : s.out, rank == 1, &ack, 1));
  return (nowNs() - start) / 1e9;
}

int runRank(const Options& o, int rank, int fd) {
  rdma_test::chooseByRank("SLIMECCL_IB_HCA", o.devices, rank);
  NetModule* net = netModuleByName("ib");
  if (net == nullptr) die("no ib module");
  Side s;
  s.net = net;
  s.bell.reset(Bell::create());
  s.ctx = NetContext{s.bell.get(), rank};
  s.ctx.placement = &systemNetPlacement();
  connectToPeer(s, fd);
  std::vector<std::vector<char>> bufs(o.mode == "bw" ? o.depth : 1, std::vector<char>(std::max<size_t>(o.bytes, 1)));
  meet(fd);
  if (o.mode == "lat") {
    std::vector<double> halves;
    pingPong(s, rank, bufs[0].data(), o.bytes, o.warmup, nullptr);
    pingPong(s, rank, bufs[0].data(), o.bytes, o.iters, rank == 0 ? &halves : nullptr);
    if (rank == 0) {
      double sum = 0;
      for (double h : halves) sum += h;
      std::nth_element(halves.begin(), halves.begin() + halves.size() / 2, halves.end());
      printf("ib module ping-pong, %zu bytes, %d iterations: t_typical %.2f us, t_avg %.2f us\n", o.bytes, o.iters,
             halves[halves.size() / 2], sum / halves.size());
    }
  } else {
    stream(s, rank, bufs, o.bytes, o.warmup, o.depth);
    double seconds = stream(s, rank, bufs, o.bytes, o.iters, o.depth);
    if (rank == 0)
      printf("ib module stream, %zu bytes x %d, depth %d: %.2f MB/s\n", o.bytes, o.iters, o.depth,
             o.bytes * o.iters / seconds / 1e6);
  }
  // Neither rank closes its queue pairs while the other may still be waiting for a message.
  meet(fd);
  net->closeSend(s.out);
  net->closeRecv(s.in);
  net->closeListen(s.listen);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc >= 2) o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "-s")
      o.bytes = strtoull(argv[i + 1], nullptr, 0);
    else if (flag == "-n")
      o.iters = atoi(argv[i + 1]);
    else if (flag == "-w")
      o.warmup = atoi(argv[i + 1]);
    else if (flag == "-d")
      o.depth = atoi(argv[i + 1]);
    else if (flag == "--devices")
      o.devices = argv[i + 1];
    else
      o.mode.clear();
  }
  if (o.mode != "lat" && o.mode != "bw") {
    fprintf(stderr, "usage: %s lat|bw [--devices A,B] [-s BYTES] [-n ITERS] [-w WARMUP] [-d DEPTH]\n", argv[0]);
    return 2;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    perror("ib_module_perf: socketpair");
    return 1;
  }
  // Verbs objects do not survive fork: each rank opens its device after it.
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("ib_module_perf: fork");
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    _exit(runRank(o, 1, fds[1]));
  }
  close(fds[1]);
  int rc = runRank(o, 0, fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "ib_module_perf: rank 1 failed (status %#x)\n", status);
    return 1;
  }
  return rc;
}
