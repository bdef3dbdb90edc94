// The ib module alone, without the executor above it: two threads, one per verbs device (ranks 0
// and 1 take the usable ports in turn), connected both ways through the NetModule interface.
//   lat: 8-byte (or -s) ping-pong, busy-polling test(); half round trip as ib_write_lat reports.
//   bw:  thread 0 streams -s byte messages to thread 1 with -d in flight (ib_write_bw's tx depth).
// Comparing these with perftest shows what the module costs; comparing them with
// rdma_pingpong_perf shows what the layers above it cost.
//
// Usage: ib_module_perf lat|bw [-s BYTES] [-n ITERS] [-w WARMUP] [-d DEPTH]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/net.h"
#include "net/bell.h"
#include "src/error.h"
#include "src/sys/time.h"
#include "tick_timer.h"

namespace {

using namespace slimeccl;

struct Options {
  std::string mode;
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
    ok(send ? net->isend(conn, data, bytes, &request) : net->irecv(conn, data, bytes, &request), send ? "isend" : "irecv");
  return request;
}

void connectSides(Side& a, Side& b) {
  Side* sides[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) ok(sides[i]->net->connect(sides[i]->ctx, sides[1 - i]->handle, ConnKind::Data, &sides[i]->out), "connect");
  while (a.in == nullptr || b.in == nullptr)
    for (Side* s : sides)
      if (s->in == nullptr) ok(s->net->accept(s->listen, &s->in), "accept");
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

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc >= 2) o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "-s") o.bytes = strtoull(argv[i + 1], nullptr, 0);
    else if (flag == "-n") o.iters = atoi(argv[i + 1]);
    else if (flag == "-w") o.warmup = atoi(argv[i + 1]);
    else if (flag == "-d") o.depth = atoi(argv[i + 1]);
    else o.mode.clear();
  }
  if (o.mode != "lat" && o.mode != "bw") {
    fprintf(stderr, "usage: %s lat|bw [-s BYTES] [-n ITERS] [-w WARMUP] [-d DEPTH]\n", argv[0]);
    return 2;
  }
  NetModule* net = netModuleByName("ib");
  if (net == nullptr) die("no ib module");
  Side sides[2];
  for (int r = 0; r < 2; ++r) {
    sides[r].net = net;
    sides[r].bell.reset(Bell::create());
    sides[r].ctx = NetContext{sides[r].bell.get(), r};
    ok(net->listen(sides[r].ctx, sides[r].handle, &sides[r].listen), "listen");
  }
  connectSides(sides[0], sides[1]);
  std::atomic<int> ready{0};
  double seconds = 0;
  std::vector<double> halves;
  auto run = [&](int rank) {
    Side& s = sides[rank];
    std::vector<std::vector<char>> bufs(o.mode == "bw" ? o.depth : 1, std::vector<char>(std::max<size_t>(o.bytes, 1)));
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    if (o.mode == "lat") {
      pingPong(s, rank, bufs[0].data(), o.bytes, o.warmup, nullptr);
      pingPong(s, rank, bufs[0].data(), o.bytes, o.iters, rank == 0 ? &halves : nullptr);
    } else {
      stream(s, rank, bufs, o.bytes, o.warmup, o.depth);
      double t = stream(s, rank, bufs, o.bytes, o.iters, o.depth);
      if (rank == 0) seconds = t;
    }
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  if (o.mode == "lat") {
    double sum = 0;
    for (double h : halves) sum += h;
    std::nth_element(halves.begin(), halves.begin() + halves.size() / 2, halves.end());
    printf("ib module ping-pong, %zu bytes, %d iterations: t_typical %.2f us, t_avg %.2f us\n", o.bytes, o.iters,
           halves[halves.size() / 2], sum / halves.size());
  } else {
    printf("ib module stream, %zu bytes x %d, depth %d: %.2f MB/s\n", o.bytes, o.iters, o.depth,
           o.bytes * o.iters / seconds / 1e6);
  }
  for (Side& s : sides) {
    net->closeSend(s.out);
    net->closeRecv(s.in);
    net->closeListen(s.listen);
  }
  return 0;
}
