// One rank of the RDMA suite, run under slimeccl-run with the ib module forced (or chosen by
// topology): blocking ping-pongs first, point-to-point messages on both sides of the
// eager/rendezvous boundary, many messages in one group (credits, adverts, mixed sizes), every
// pair, the collectives with their data checked, and buffers freed and reallocated at the same
// address between receives (the registration cache must notice). Prints "rdma_check rank R: OK" and exits 0 when all is
// right.
//
// Usage: rdma_check [--devices rxe_a,rxe_b] [--hosts hostA,hostB]
// (rank r takes entry r mod n of each list: its verbs device and its SLIMECCL_HOSTID)
#include <slimeccl.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rank_setup.h"

namespace {

using namespace rdma_test;

constexpr const char* kProgram = "rdma_check";

struct World {
  slimecclComm_t comm;
  int rank;
  int nranks;
  uint64_t call = 0;  // advances in step on every rank: each checked call gets fresh data
};

void require(World& w, slimecclResult_t rc, const char* call) { requireSuccess(kProgram, w.rank, rc, call, w.comm); }

uint8_t byteOf(uint64_t call, int src, int dst, size_t i) {
  uint64_t x =
      (call * 0x9E3779B97F4A7C15ULL) ^ (static_cast<uint64_t>(src) << 40) ^ (static_cast<uint64_t>(dst) << 32) ^ i;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<uint8_t>(x >> 32);
}

void fill(char* p, size_t n, uint64_t call, int src, int dst) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(byteOf(call, src, dst, i));
}

void expectBytes(World& w, const char* p, size_t n, uint64_t call, int src, const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (static_cast<uint8_t>(p[i]) != byteOf(call, src, w.rank, i))
      failRank(kProgram, w.rank,
               what + ": byte " + std::to_string(i) + " of " + std::to_string(n) + " from rank " + std::to_string(src) +
                   " is wrong");
}

// Every rank sends `bytes` to rank+1 and receives from rank-1 in one group.
void ringExchange(World& w, size_t bytes, char* sendBuf, char* recvBuf, const std::string& what) {
  uint64_t call = ++w.call;
  int next = (w.rank + 1) % w.nranks, prev = (w.rank + w.nranks - 1) % w.nranks;
  fill(sendBuf, bytes, call, w.rank, next);
  memset(recvBuf, 0xEE, bytes);
  require(w, slimecclGroupStart(), "slimecclGroupStart");
  require(w, slimecclSend(sendBuf, bytes, slimecclChar, next, w.comm, nullptr), "slimecclSend");
  require(w, slimecclRecv(recvBuf, bytes, slimecclChar, prev, w.comm, nullptr), "slimecclRecv");
  require(w, slimecclGroupEnd(), "slimecclGroupEnd");
  expectBytes(w, recvBuf, bytes, call, prev, what + " (" + std::to_string(bytes) + " bytes)");
}

// Blocking Send and Recv alone, before any group has made the links: ranks pair up (0,1), (2,3),
// the even one sending first. After the first exchange the small ones go straight through the
// module as one eager message each, while the link's other connections may still be finishing
// their setup; both sides on both sides of the eager sizes.
void checkBlockingPingPong(World& w) {
  int partner = w.rank % 2 == 0 ? w.rank + 1 : w.rank - 1;
  const size_t sizes[] = {8, 8, 100, 8192, 8193, 20000, 8};
  std::vector<char> send(20000), recv(20000);
  for (size_t bytes : sizes) {
    uint64_t call = ++w.call;
    if (partner >= w.nranks) continue;
    fill(send.data(), bytes, call, w.rank, partner);
    memset(recv.data(), 0xEE, bytes);
    auto sendIt = [&] {
      require(w, slimecclSend(send.data(), bytes, slimecclChar, partner, w.comm, nullptr), "slimecclSend");
    };
    auto recvIt = [&] {
      require(w, slimecclRecv(recv.data(), bytes, slimecclChar, partner, w.comm, nullptr), "slimecclRecv");
    };
    if (w.rank % 2 == 0) {
      sendIt();
      recvIt();
    } else {
      recvIt();
      sendIt();
    }
    expectBytes(w, recv.data(), bytes, call, partner, "blocking ping-pong (" + std::to_string(bytes) + " bytes)");
  }
}

void checkRingSizes(World& w) {
  // Around 48 B (inline), the eager limit (16 KiB payload) and the 64 KiB slice size.
  const size_t sizes[] = {0, 1, 7, 48, 49, 4096, 16383, 16432, 16433, 65539, 262147, (1 << 20) + 7, (3 << 20) + 1};
  std::vector<char> send((3 << 20) + 1), recv((3 << 20) + 1);
  for (size_t bytes : sizes) ringExchange(w, bytes, send.data(), recv.data(), "ring Send/Recv");
}

// Many messages to the same peer in one group: more than the eager slots, sizes on both sides of
// the eager limit in turn, so adverts for buffers that get eager messages are skipped correctly.
void checkManyMessages(World& w) {
  const size_t pattern[] = {100, 40000, 0, 16432, 70001, 3};
  const int count = 48;
  int next = (w.rank + 1) % w.nranks, prev = (w.rank + w.nranks - 1) % w.nranks;
  std::vector<std::vector<char>> sends(count), recvs(count);
  uint64_t call = ++w.call;
  for (int m = 0; m < count; ++m) {
    size_t bytes = pattern[m % 6];
    sends[m].resize(bytes);
    recvs[m].assign(bytes, 0);
    fill(sends[m].data(), bytes, call + m, w.rank, next);
  }
  require(w, slimecclGroupStart(), "slimecclGroupStart");
  for (int m = 0; m < count; ++m) {
    require(w, slimecclSend(sends[m].data(), sends[m].size(), slimecclChar, next, w.comm, nullptr), "slimecclSend");
    require(w, slimecclRecv(recvs[m].data(), recvs[m].size(), slimecclChar, prev, w.comm, nullptr), "slimecclRecv");
  }
  require(w, slimecclGroupEnd(), "slimecclGroupEnd");
  for (int m = 0; m < count; ++m)
    expectBytes(w, recvs[m].data(), recvs[m].size(), call + m, prev, "message " + std::to_string(m) + " of a group");
  w.call += count;
}

void checkAllPairs(World& w) {
  const size_t sizes[] = {12345, 300007};
  for (size_t bytes : sizes) {
    uint64_t call = ++w.call;
    std::vector<std::vector<char>> sends(w.nranks, std::vector<char>(bytes)), recvs(w.nranks, std::vector<char>(bytes));
    require(w, slimecclGroupStart(), "slimecclGroupStart");
    for (int p = 0; p < w.nranks; ++p) {
      if (p == w.rank) continue;
      fill(sends[p].data(), bytes, call, w.rank, p);
      require(w, slimecclSend(sends[p].data(), bytes, slimecclChar, p, w.comm, nullptr), "slimecclSend");
      require(w, slimecclRecv(recvs[p].data(), bytes, slimecclChar, p, w.comm, nullptr), "slimecclRecv");
    }
    require(w, slimecclGroupEnd(), "slimecclGroupEnd");
    for (int p = 0; p < w.nranks; ++p)
      if (p != w.rank) expectBytes(w, recvs[p].data(), bytes, call, p, "all-pairs exchange");
  }
}

// Exactly representable values, distinct per call, rank and element.
float valueOf(uint64_t call, int rank, size_t i) {
  return static_cast<float>((call * 7919 + rank * 104729 + i) % 65521);
}

void checkAllGather(World& w) {
  const size_t counts[] = {0, 1, 1023, 16387, 131075};
  for (size_t count : counts)
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      uint64_t call = ++w.call;
      std::vector<float> all(count * w.nranks, -1.0f), mine(count);
      float* send = inPlace ? all.data() + count * w.rank : mine.data();
      for (size_t i = 0; i < count; ++i) send[i] = valueOf(call, w.rank, i);
      require(w, slimecclAllGather(send, all.data(), count, slimecclFloat, w.comm, nullptr), "slimecclAllGather");
      for (int r = 0; r < w.nranks; ++r)
        for (size_t i = 0; i < count; ++i)
          if (all[r * count + i] != valueOf(call, r, i))
            failRank(kProgram, w.rank,
                     "AllGather of " + std::to_string(count) + " floats" + (inPlace ? " in place" : "") + ": element " +
                         std::to_string(i) + " of rank " + std::to_string(r) + " is wrong");
    }
}

// The collectives that are not built yet answer InvalidUsage "... not available ..."; skip those.
bool available(World& w, slimecclResult_t rc, const char* call) {
  if (rc == slimecclInvalidUsage && strstr(slimecclGetLastError(w.comm), "not available") != nullptr) {
    if (w.rank == 0) printf("rdma_check: %s is not available in this build; skipped\n", call);
    return false;
  }
  require(w, rc, call);
  return true;
}

void checkReductions(World& w) {
  const size_t count = 70001;
  uint64_t call = ++w.call;
  std::vector<float> in(count), out(count, -1.0f), expected(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    in[i] = valueOf(call, w.rank, i);
    for (int r = 0; r < w.nranks; ++r) expected[i] += valueOf(call, r, i);
  }
  if (available(w, slimecclAllReduce(in.data(), out.data(), count, slimecclFloat, slimecclSum, w.comm, nullptr),
                "slimecclAllReduce"))
    for (size_t i = 0; i < count; ++i)
      if (out[i] != expected[i]) failRank(kProgram, w.rank, "AllReduce element " + std::to_string(i) + " is wrong");

  std::vector<float> full(count * w.nranks), part(count, -1.0f);
  for (size_t i = 0; i < full.size(); ++i) full[i] = valueOf(call, w.rank, i);
  if (available(w, slimecclReduceScatter(full.data(), part.data(), count, slimecclFloat, slimecclSum, w.comm, nullptr),
                "slimecclReduceScatter"))
    for (size_t i = 0; i < count; ++i) {
      float sum = 0;
      for (int r = 0; r < w.nranks; ++r) sum += valueOf(call, r, w.rank * count + i);
      if (part[i] != sum) failRank(kProgram, w.rank, "ReduceScatter element " + std::to_string(i) + " is wrong");
    }

  int root = w.nranks - 1;
  std::vector<float> bcast(count);
  for (size_t i = 0; i < count; ++i) bcast[i] = w.rank == root ? valueOf(call, root, i) : -1.0f;
  if (available(w, slimecclBroadcast(bcast.data(), bcast.data(), count, slimecclFloat, root, w.comm, nullptr),
                "slimecclBroadcast"))
    for (size_t i = 0; i < count; ++i)
      if (bcast[i] != valueOf(call, root, i))
        failRank(kProgram, w.rank, "Broadcast element " + std::to_string(i) + " is wrong");

  std::fill(out.begin(), out.end(), -1.0f);
  if (available(w, slimecclReduce(in.data(), out.data(), count, slimecclFloat, slimecclSum, 0, w.comm, nullptr),
                "slimecclReduce") &&
      w.rank == 0)
    for (size_t i = 0; i < count; ++i)
      if (out[i] != expected[i]) failRank(kProgram, w.rank, "Reduce element " + std::to_string(i) + " is wrong");

  const size_t block = 4099;
  std::vector<float> a2aIn(block * w.nranks), a2aOut(block * w.nranks, -1.0f);
  for (int p = 0; p < w.nranks; ++p)
    for (size_t i = 0; i < block; ++i) a2aIn[p * block + i] = valueOf(call + p, w.rank, i);
  if (available(w, slimecclAlltoAll(a2aIn.data(), a2aOut.data(), block, slimecclFloat, w.comm, nullptr),
                "slimecclAlltoAll"))
    for (int p = 0; p < w.nranks; ++p)
      for (size_t i = 0; i < block; ++i)
        if (a2aOut[p * block + i] != valueOf(call + w.rank, p, i))
          failRank(kProgram, w.rank,
                   "AlltoAll element " + std::to_string(i) + " from rank " + std::to_string(p) + " is wrong");
  w.call += w.nranks;
}

// Receives into memory that is unmapped and mapped again at the same address, or whose pages are
// discarded, between two receives. A registration that outlived the old pages would put the
// second message into them, and the new pages would keep the 0xEE filler.
void checkReusedAddresses(World& w) {
  const size_t bytes = (1 << 20) + 4096;
  void* wanted = nullptr;
  for (int round = 0; round < 3; ++round) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (wanted != nullptr ? MAP_FIXED_NOREPLACE : 0);
    char* recv = static_cast<char*>(mmap(wanted, bytes, PROT_READ | PROT_WRITE, flags, -1, 0));
    char* send = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (recv == MAP_FAILED || send == MAP_FAILED) failRank(kProgram, w.rank, "mmap failed");
    if (wanted != nullptr && recv != wanted)
      failRank(kProgram, w.rank, "could not map the receive buffer at its old address");
    wanted = recv;
    ringExchange(w, bytes, send, recv, "receive into a remapped buffer, round " + std::to_string(round));
    madvise(recv, bytes, MADV_DONTNEED);
    ringExchange(w, bytes, send, recv, "receive after MADV_DONTNEED, round " + std::to_string(round));
    munmap(send, bytes);
    munmap(recv, bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string devices, hosts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--devices" && i + 1 < argc) {
      devices = argv[++i];
    } else if (arg == "--hosts" && i + 1 < argc) {
      hosts = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--devices DEV0,DEV1,...] [--hosts HOST0,HOST1,...]\n", argv[0]);
      return 2;
    }
  }
  RankEnv env = rankEnvFromLauncher();
  chooseByRank("SLIMECCL_IB_HCA", devices, env.rank);
  chooseByRank("SLIMECCL_HOSTID", hosts, env.rank);
  World w{joinComm(env, kProgram), env.rank, env.nranks};
  double start = nowSeconds();
  checkBlockingPingPong(w);
  checkRingSizes(w);
  checkManyMessages(w);
  if (w.nranks > 1) checkAllPairs(w);
  checkAllGather(w);
  checkReductions(w);
  checkReusedAddresses(w);
  require(w, slimecclCommFinalize(w.comm), "slimecclCommFinalize");
  require(w, slimecclCommDestroy(w.comm), "slimecclCommDestroy");
  printf("%s rank %d: OK (%d ranks, %.1f s)\n", kProgram, w.rank, w.nranks, nowSeconds() - start);
  return 0;
}
