// The three ways an shm message travels (slots, byte FIFO, single copy), each forced by its
// parameter and checked both for the data and for the path it took.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/net.h"
#include "net/shm/shm_connection.h"
#include "net/shm/slot_ring.h"
#include "src/base/error.h"
#include "src/base/sys/shared_alloc.h"

namespace slimeccl {
namespace {

// Sets SLIMECCL_SHM_* variables for the connections made while it lives.
class ShmEnv {
 public:
  ShmEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto& [name, value] : vars) {
      setenv(name, value, 1);
      names_.push_back(name);
    }
  }
  ~ShmEnv() {
    for (const char* name : names_) unsetenv(name);
  }

 private:
  std::vector<const char*> names_;
};

std::vector<char> pattern(size_t bytes, int seed) {
  std::vector<char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>(i * 131 + seed + (i >> 12));
  return v;
}

// Runs until the request completes; returns the module's result.
slimecclResult_t waitFor(void* request, size_t* size) {
  NetModule* shm = shmNetModule();
  for (;;) {
    bool done = false;
    slimecclResult_t rc = shm->test(request, &done, size);
    if (rc != slimecclSuccess || done) return rc;
  }
}

// Both ends of one connection in this process; the receiver accepts while the sender connects.
struct LocalPair {
  std::unique_ptr<Bell> sendBell{Bell::create()}, recvBell{Bell::create()};
  void* listenComm = nullptr;
  ShmConn* send = nullptr;
  ShmConn* recv = nullptr;
  explicit LocalPair(int ranksOnHost = 0, bool ranksShareCores = false) {
    NetModule* shm = shmNetModule();
    char handle[SLIMECCL_NET_HANDLE_MAXSIZE];
    EXPECT_EQ(shm->listen(NetContext{recvBell.get(), 1}, handle, &listenComm), slimecclSuccess);
    void* s = nullptr;
    const NetContext sender{sendBell.get(), 0, ranksOnHost, ranksShareCores};
    while (s == nullptr) EXPECT_EQ(shm->connect(sender, handle, ConnKind::Data, &s), slimecclSuccess);
    void* r = nullptr;
    while (r == nullptr) EXPECT_EQ(shm->accept(listenComm, &r), slimecclSuccess);
    send = static_cast<ShmConn*>(s);
    recv = static_cast<ShmConn*>(r);
  }
  ~LocalPair() {
    NetModule* shm = shmNetModule();
    shm->closeSend(send);
    shm->closeRecv(recv);
    shm->closeListen(listenComm);
  }
  // Sends and receives one message on two threads; returns the received bytes.
  std::vector<char> roundTrip(const std::vector<char>& message) {
    NetModule* shm = shmNetModule();
    std::vector<char> got(message.size());
    std::thread sender([&] {
      void* req = nullptr;
      while (req == nullptr) EXPECT_EQ(shm->isend(send, message.data(), message.size(), &req), slimecclSuccess);
      size_t size = 0;
      EXPECT_EQ(waitFor(req, &size), slimecclSuccess) << threadError();
    });
    void* req = nullptr;
    while (req == nullptr) EXPECT_EQ(shm->irecv(recv, got.data(), got.size(), &req), slimecclSuccess);
    size_t size = 0;
    EXPECT_EQ(waitFor(req, &size), slimecclSuccess) << threadError();
    EXPECT_EQ(size, message.size());
    sender.join();
    return got;
  }
  uint64_t fifoBytes() const { return send->fifo.header()->tail.load(); }
  uint64_t pulls() const { return send->slots.header()->pulled.load(); }
};

TEST(ShmPaths, SmallMessagesTravelInSlotsOnly) {
  ShmEnv env{{"SLIMECCL_SHM_EAGER_BYTES", "1024"}};
  LocalPair pair;
  for (size_t bytes : {0, 1, 8, 48, 49, 60, 200, 1024}) {
    std::vector<char> message = pattern(bytes, static_cast<int>(bytes));
    EXPECT_EQ(pair.roundTrip(message), message) << bytes << " bytes";
  }
  EXPECT_EQ(pair.fifoBytes(), 0u);
}

// The reader polls the head of the next message together with the slots the last one took: what
// those further slots hold (older messages, a message's later part) must not make a head look ready.
TEST(ShmPaths, SlotRingHeadReadyOnlyOnceTheNextMessageStartsWhateverTheLastTook) {
  constexpr size_t kSlots = 8;
  std::vector<char> mapping(SlotRing::mappingBytes(kSlots) + 64);
  void* aligned = mapping.data() + (64 - reinterpret_cast<uintptr_t>(mapping.data()) % 64) % 64;
  SlotRing::format(aligned, kSlots);
  SlotRing writer(aligned), reader(aligned);
  std::vector<char> three(3 * SlotRing::kPayloadBytes), one(8), out(three.size());
  for (size_t i = 0; i < three.size(); ++i) three[i] = static_cast<char>(i * 7 + 1);
  for (int round = 0; round < 6; ++round) {
    EXPECT_FALSE(reader.headReady()) << "round " << round;
    ASSERT_TRUE(writer.write(three.data(), three.size()));
    ASSERT_TRUE(reader.headReady());
    ASSERT_TRUE(reader.ready(2));
    reader.copyOut(0, out.data(), three.size());
    EXPECT_EQ(out, three);
    reader.consume(3);
    // The last message took three slots; the next one, of one slot, is not there yet.
    EXPECT_FALSE(reader.headReady()) << "round " << round;
    ASSERT_TRUE(writer.write(one.data(), one.size()));
    EXPECT_TRUE(reader.headReady());
    EXPECT_FALSE(reader.ready(1));
    reader.consume(1);
  }
}

TEST(ShmPaths, SlotRingWrapsAroundUnderAStreamOfMessages) {
  ShmEnv env{{"SLIMECCL_SHM_EAGER_BYTES", "200"}};
  LocalPair pair;
  NetModule* shm = shmNetModule();
  const int count = 5000;
  std::thread sender([&] {
    for (int i = 0; i < count; ++i) {
      std::vector<char> message = pattern(8 + i % 190, i);
      void* req = nullptr;
      while (req == nullptr) ASSERT_EQ(shm->isend(pair.send, message.data(), message.size(), &req), slimecclSuccess);
      size_t size = 0;
      ASSERT_EQ(waitFor(req, &size), slimecclSuccess);
    }
  });
  for (int i = 0; i < count; ++i) {
    std::vector<char> got(200);
    void* req = nullptr;
    while (req == nullptr) ASSERT_EQ(shm->irecv(pair.recv, got.data(), got.size(), &req), slimecclSuccess);
    size_t size = 0;
    ASSERT_EQ(waitFor(req, &size), slimecclSuccess);
    got.resize(size);
    ASSERT_EQ(got, pattern(8 + i % 190, i)) << "message " << i;
  }
  sender.join();
  EXPECT_EQ(pair.fifoBytes(), 0u);
}

TEST(ShmPaths, WithoutEagerSlotsPayloadsGoThroughTheFifo) {
  ShmEnv env{{"SLIMECCL_SHM_EAGER_BYTES", "0"}, {"SLIMECCL_SHM_SINGLE_COPY", "0"}};
  LocalPair pair;
  std::vector<char> small = pattern(8, 1), large = pattern(3 * 1024 * 1024 + 7, 2);
  EXPECT_EQ(pair.roundTrip(small), small);
  EXPECT_EQ(pair.roundTrip(large), large);
  EXPECT_EQ(pair.fifoBytes(), small.size() + large.size());
  EXPECT_EQ(pair.pulls(), 0u);
  EXPECT_EQ(pair.recv->mode, SingleCopyMode::Off);
}

// sendNow and recvNow: a message of at most 2 KiB and a cache line (or the eager size, where larger)
// goes and comes whole through the slots at once, without a request, past the eager size too;
// recvNow finds nothing before it is sent.
TEST(ShmNow, ASmallMessageGoesAndComesAtOnceThroughTheSlots) {
  ShmEnv env{{"SLIMECCL_SHM_EAGER_BYTES", "1024"}};
  LocalPair pair;
  NetModule* shm = shmNetModule();
  for (size_t bytes : {0, 8, 60, 1024, 2112}) {
    std::vector<char> message = pattern(bytes, static_cast<int>(bytes)), got(2112, 0);
    NowStatus status = NowStatus::Done;
    size_t length = 99;
    ASSERT_EQ(shm->recvNow(pair.recv, got.data(), got.size(), &length, &status), slimecclSuccess);
    EXPECT_EQ(status, NowStatus::NotYet) << bytes << " bytes";
    ASSERT_EQ(shm->sendNow(pair.send, message.data(), message.size(), &status), slimecclSuccess);
    EXPECT_EQ(status, NowStatus::Done) << bytes << " bytes";
    ASSERT_EQ(shm->recvNow(pair.recv, got.data(), got.size(), &length, &status), slimecclSuccess);
    EXPECT_EQ(status, NowStatus::Done) << bytes << " bytes";
    EXPECT_EQ(length, bytes);
    got.resize(length);
    EXPECT_EQ(got, message) << bytes << " bytes";
  }
  EXPECT_EQ(pair.fifoBytes(), 0u);
}

// What cannot go at once is left to a request, in order: a message past what goes at once (2 KiB
// and a cache line), one behind a request still in flight, one that came by another path, one
// longer than the buffer (which the request then reports).
TEST(ShmNow, WhatCannotGoAtOnceIsLeftToARequestInOrder) {
  ShmEnv env{{"SLIMECCL_SHM_EAGER_BYTES", "64"}, {"SLIMECCL_SHM_SINGLE_COPY", "0"}};
  LocalPair pair;
  NetModule* shm = shmNetModule();
  NowStatus status = NowStatus::Done;
  const std::vector<char> pastAtOnce = pattern(2113, 1), small = pattern(8, 3);
  ASSERT_EQ(shm->sendNow(pair.send, pastAtOnce.data(), pastAtOnce.size(), &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  // Larger than the byte FIFO: the request stays in flight until the receiver takes it.
  const std::vector<char> large = pattern(4 * 1024 * 1024 + 7, 2);
  void* sending = nullptr;
  while (sending == nullptr) ASSERT_EQ(shm->isend(pair.send, large.data(), large.size(), &sending), slimecclSuccess);
  ASSERT_EQ(shm->sendNow(pair.send, small.data(), small.size(), &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  std::vector<char> got(large.size());
  size_t length = 0;
  ASSERT_EQ(shm->recvNow(pair.recv, got.data(), got.size(), &length, &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  std::thread sender([&] {
    size_t size = 0;
    EXPECT_EQ(waitFor(sending, &size), slimecclSuccess) << threadError();
  });
  void* receiving = nullptr;
  while (receiving == nullptr) ASSERT_EQ(shm->irecv(pair.recv, got.data(), got.size(), &receiving), slimecclSuccess);
  ASSERT_EQ(waitFor(receiving, &length), slimecclSuccess) << threadError();
  sender.join();
  EXPECT_EQ(length, large.size());
  EXPECT_EQ(got, large);
  // A receive already posted keeps its place in front.
  std::vector<char> first(8);
  receiving = nullptr;
  while (receiving == nullptr)
    ASSERT_EQ(shm->irecv(pair.recv, first.data(), first.size(), &receiving), slimecclSuccess);
  ASSERT_EQ(shm->recvNow(pair.recv, got.data(), got.size(), &length, &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  ASSERT_EQ(shm->sendNow(pair.send, small.data(), small.size(), &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::Done);
  ASSERT_EQ(waitFor(receiving, &length), slimecclSuccess) << threadError();
  EXPECT_EQ(first, small);
  // Longer than the buffer: left where it is, and the request says so.
  ASSERT_EQ(shm->sendNow(pair.send, small.data(), small.size(), &status), slimecclSuccess);
  ASSERT_EQ(status, NowStatus::Done);
  char four[4];
  ASSERT_EQ(shm->recvNow(pair.recv, four, sizeof(four), &length, &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  receiving = nullptr;
  while (receiving == nullptr) ASSERT_EQ(shm->irecv(pair.recv, four, sizeof(four), &receiving), slimecclSuccess);
  EXPECT_EQ(waitFor(receiving, &length), slimecclInternalError);
  EXPECT_NE(threadError().find("a message of 8 bytes arrived for a receive of 4 bytes"), std::string::npos)
      << threadError();
}

// Without the module's own: every other module leaves each message to a request.
TEST(ShmNow, ModulesWithoutItLeaveEveryMessageToARequest) {
  NetModule* socket = socketNetModule();
  ASSERT_NE(socket, nullptr);
  NowStatus status = NowStatus::Done;
  char byte = 0;
  size_t length = 0;
  ASSERT_EQ(socket->sendNow(nullptr, &byte, 1, &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
  status = NowStatus::Done;
  ASSERT_EQ(socket->recvNow(nullptr, &byte, 1, &length, &status), slimecclSuccess);
  EXPECT_EQ(status, NowStatus::UseRequest);
}

// Without SLIMECCL_SHM_SINGLE_COPY_BYTES a message is pulled from 16 KiB between the two ranks
// of a host that each have a core, from 64 KiB otherwise; the variable overrides both.
TEST(ShmPaths, SingleCopyStartsAt16KiBBetweenTwoRanksOnOwnCoresElseAt64KiB) {
  struct Case {
    int ranksOnHost;
    bool ranksShareCores;
    const char* setting;  // SLIMECCL_SHM_SINGLE_COPY_BYTES, or nullptr
    size_t largestThroughFifo, smallestPulled;
  };
  constexpr size_t k16K = 16 * 1024, k32K = 32 * 1024, k64K = 64 * 1024;
  for (const Case& c : {Case{2, false, nullptr, k16K - 1, k16K}, Case{2, true, nullptr, k64K - 1, k64K},
                        Case{4, false, nullptr, k64K - 1, k64K}, Case{0, false, nullptr, k64K - 1, k64K},
                        Case{2, false, "32K", k32K - 1, k32K}, Case{4, true, "32K", k32K - 1, k32K}}) {
    if (c.setting != nullptr) setenv("SLIMECCL_SHM_SINGLE_COPY_BYTES", c.setting, 1);
    LocalPair pair(c.ranksOnHost, c.ranksShareCores);
    unsetenv("SLIMECCL_SHM_SINGLE_COPY_BYTES");
    const std::string what = std::to_string(c.ranksOnHost) + " ranks on the host, " +
                             (c.ranksShareCores ? "shared cores" : "own cores") + ", setting " +
                             (c.setting != nullptr ? c.setting : "none");
    std::vector<char> fifo = pattern(c.largestThroughFifo, 1), pulled = pattern(c.smallestPulled, 2);
    EXPECT_EQ(pair.roundTrip(fifo), fifo) << what;
    EXPECT_EQ(pair.pulls(), 0u) << what;
    EXPECT_EQ(pair.fifoBytes(), fifo.size()) << what;
    EXPECT_EQ(pair.roundTrip(pulled), pulled) << what;
    EXPECT_EQ(pair.pulls(), 1u) << what;
    EXPECT_EQ(pair.fifoBytes(), fifo.size()) << what;
  }
}

TEST(ShmPaths, ThreadsOfOneProcessCopyOnceWithMemcpy) {
  ShmEnv env{{"SLIMECCL_SHM_SINGLE_COPY_BYTES", "4096"}};
  LocalPair pair;
  EXPECT_EQ(pair.recv->mode, SingleCopyMode::SameProcess);
  std::vector<char> message = pattern(5 * 1024 * 1024 + 3, 3);
  EXPECT_EQ(pair.roundTrip(message), message);
  EXPECT_EQ(pair.pulls(), 1u);
  EXPECT_EQ(pair.fifoBytes(), 0u);
}

// ---- the copy itself (process_vm_readv on this very process) ----

TEST(SingleCopy, CutsLongRangesIntoPiecesOfAtMostThePieceSize) {
  std::vector<char> from = pattern(1000003, 7), to(from.size());
  int err = -1;
  size_t got = copyFromPeer(SingleCopyMode::CrossMemory, getpid(), reinterpret_cast<uint64_t>(from.data()), to.data(),
                            from.size(), 4099, false, &err);
  EXPECT_EQ(got, from.size());
  EXPECT_EQ(err, 0);
  EXPECT_EQ(to, from);
}

TEST(SingleCopy, APartialTransferKeepsWhatArrivedAndSaysWhyItStopped) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Two pages of which the second is gone: the kernel moves the first, then refuses.
  char* region =
      static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  ASSERT_EQ(munmap(region + page, page), 0);
  memset(region, 'a', page);
  std::vector<char> to(2 * page, 'z');
  int err = 0;
  size_t got = copyFromPeer(SingleCopyMode::CrossMemory, getpid(), reinterpret_cast<uint64_t>(region), to.data(),
                            2 * page, 1 << 30, false, &err);
  EXPECT_EQ(got, page);
  EXPECT_EQ(err, EFAULT);
  EXPECT_EQ(std::string(to.data(), page), std::string(page, 'a'));
  EXPECT_EQ(to[page], 'z');
  munmap(region, page);
}

TEST(SingleCopy, TheProbeReadsTheProbeWordOfAProcess) {
  std::string why;
  EXPECT_EQ(probeSingleCopy(getpid(), reinterpret_cast<uint64_t>(singleCopyProbeWord()), &why),
            SingleCopyMode::CrossMemory);
  uint64_t wrong = 0;
  EXPECT_EQ(probeSingleCopy(getpid(), reinterpret_cast<uint64_t>(&wrong), &why), SingleCopyMode::Refused);
  EXPECT_FALSE(why.empty());
}

// ---- across processes ----

struct Pipe {
  int fds[2];
  Pipe() { EXPECT_EQ(pipe(fds), 0); }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
};

// In a child process: connects to handle once the receiver has decided on single copy (until it
// has accepted, messages go through the FIFO); leaves with code 2 if it cannot.
void* connectAfterVerdict(const char* handle, Bell* bell) {
  void* send = nullptr;
  while (send == nullptr)
    if (shmNetModule()->connect(NetContext{bell, 0}, handle, ConnKind::Data, &send) != slimecclSuccess) _exit(2);
  while (static_cast<ShmConn*>(send)->slots.header()->singleCopyMode.load() == 0) usleep(100);
  return send;
}

// A child process connects to handle and sends message; with exitEarly it leaves as soon as the
// message is posted, before the receiver has copied it.
pid_t forkSender(const char* handle, const std::vector<char>& message, bool exitEarly) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  NetModule* shm = shmNetModule();
  std::unique_ptr<Bell> bell(Bell::create());
  void* send = connectAfterVerdict(handle, bell.get());
  void* req = nullptr;
  while (req == nullptr)
    if (shm->isend(send, message.data(), message.size(), &req) != slimecclSuccess) _exit(3);
  if (exitEarly) _exit(0);
  size_t size = 0;
  _exit(waitFor(req, &size) == slimecclSuccess ? 0 : 4);
}

struct Receiver {
  std::unique_ptr<Bell> bell{Bell::create()};
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  ShmConn* conn = nullptr;
  Receiver() { EXPECT_EQ(shmNetModule()->listen(NetContext{bell.get(), 1}, handle, &listenComm), slimecclSuccess); }
  void acceptOne() {
    void* r = nullptr;
    while (r == nullptr) ASSERT_EQ(shmNetModule()->accept(listenComm, &r), slimecclSuccess);
    conn = static_cast<ShmConn*>(r);
  }
  ~Receiver() {
    if (conn != nullptr) shmNetModule()->closeRecv(conn);
    shmNetModule()->closeListen(listenComm);
  }
};

int exitCodeOf(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ShmPaths, ProcessesCopyOnceWithProcessVmReadvInPieces) {
  // Small pieces exercise the cutting that keeps each call under the kernel's 2 GiB limit.
  ShmEnv env{{"SLIMECCL_SHM_SINGLE_COPY_BYTES", "4096"}, {"SLIMECCL_SHM_SINGLE_COPY_PIECE_BYTES", "12345"}};
  Receiver rx;
  std::vector<char> message = pattern(9 * 1024 * 1024 + 11, 4);
  pid_t child = forkSender(rx.handle, message, false);
  rx.acceptOne();
  ASSERT_EQ(rx.conn->mode, SingleCopyMode::CrossMemory);
  EXPECT_EQ(rx.conn->settings.pieceBytes, 12345u);
  std::vector<char> got(message.size());
  void* req = nullptr;
  while (req == nullptr) ASSERT_EQ(shmNetModule()->irecv(rx.conn, got.data(), got.size(), &req), slimecclSuccess);
  size_t size = 0;
  ASSERT_EQ(waitFor(req, &size), slimecclSuccess) << threadError();
  EXPECT_EQ(size, message.size());
  EXPECT_EQ(got, message);
  EXPECT_EQ(rx.conn->pullsDone, 1u);
  EXPECT_EQ(exitCodeOf(child), 0);
}

TEST(ShmPaths, ASenderThatDiesBeforeTheCopyIsARemoteError) {
  ShmEnv env{{"SLIMECCL_SHM_SINGLE_COPY_BYTES", "4096"}};
  Receiver rx;
  std::vector<char> message = pattern(64 * 1024 * 1024, 5);
  pid_t child = forkSender(rx.handle, message, true);
  rx.acceptOne();
  ASSERT_EQ(exitCodeOf(child), 0);  // the sender is gone and its buffer with it
  std::vector<char> got(message.size());
  void* req = nullptr;
  while (req == nullptr) ASSERT_EQ(shmNetModule()->irecv(rx.conn, got.data(), got.size(), &req), slimecclSuccess);
  size_t size = 0;
  EXPECT_EQ(waitFor(req, &size), slimecclRemoteError);
  std::string error = threadError();
  EXPECT_NE(error.find("is gone"), std::string::npos) << error;
}

TEST(ShmPaths, RefusedSingleCopyFallsBackToTheFifo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the receiver as another user";
  ShmEnv env{{"SLIMECCL_SHM_SINGLE_COPY_BYTES", "4096"}};
  std::vector<char> message = pattern(2 * 1024 * 1024 + 5, 6);
  Pipe handleOut;
  // The receiver runs as another user: the kernel refuses it the sender's memory.
  pid_t child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    Receiver rx;
    if (write(handleOut.fds[1], rx.handle, sizeof(rx.handle)) != sizeof(rx.handle)) _exit(11);
    rx.acceptOne();
    if (rx.conn->mode != SingleCopyMode::Refused) _exit(12);
    std::vector<char> got(message.size());
    void* req = nullptr;
    while (req == nullptr)
      if (shmNetModule()->irecv(rx.conn, got.data(), got.size(), &req) != slimecclSuccess) _exit(13);
    size_t size = 0;
    if (waitFor(req, &size) != slimecclSuccess) _exit(14);
    _exit(got == message && rx.conn->fifo.header()->tail.load() == message.size() ? 0 : 15);
  }
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE];
  ASSERT_EQ(read(handleOut.fds[0], handle, sizeof(handle)), static_cast<ssize_t>(sizeof(handle)));
  NetModule* shm = shmNetModule();
  std::unique_ptr<Bell> bell(Bell::create());
  void* send = nullptr;
  while (send == nullptr)
    ASSERT_EQ(shm->connect(NetContext{bell.get(), 0}, handle, ConnKind::Data, &send), slimecclSuccess);
  void* req = nullptr;
  while (req == nullptr) ASSERT_EQ(shm->isend(send, message.data(), message.size(), &req), slimecclSuccess);
  size_t size = 0;
  EXPECT_EQ(waitFor(req, &size), slimecclSuccess) << threadError();
  EXPECT_EQ(exitCodeOf(child), 0);
  shm->closeSend(send);
}

// ---- buffers of slimecclMemAlloc ----

// A child process sends `rounds` messages, each from a fresh shared allocation that it frees once
// the send is done. With hideFile it closes the allocation's memfd first (one round only), so the
// receiver cannot map it.
pid_t forkSharedSender(const char* handle, size_t bytes, int rounds, bool hideFile) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  NetModule* shm = shmNetModule();
  std::unique_ptr<Bell> bell(Bell::create());
  void* send = connectAfterVerdict(handle, bell.get());
  for (int round = 0; round < rounds; ++round) {
    std::string why;
    char* buffer = static_cast<char*>(sharedAlloc(bytes, &why));
    if (buffer == nullptr) _exit(5);
    std::vector<char> message = pattern(bytes, round);
    memcpy(buffer, message.data(), bytes);
    SharedAllocPlace place;
    if (hideFile && findSharedAlloc(buffer, bytes, &place)) close(place.fd);
    void* req = nullptr;
    while (req == nullptr)
      if (shm->isend(send, buffer, bytes, &req) != slimecclSuccess) _exit(3);
    size_t size = 0;
    if (waitFor(req, &size) != slimecclSuccess) _exit(4);
    if (hideFile) _exit(0);
    sharedFree(buffer);
  }
  _exit(0);
}

std::vector<char> receiveOne(ShmConn* conn, size_t bytes) {
  std::vector<char> got(bytes);
  void* req = nullptr;
  while (req == nullptr) EXPECT_EQ(shmNetModule()->irecv(conn, got.data(), got.size(), &req), slimecclSuccess);
  size_t size = 0;
  EXPECT_EQ(waitFor(req, &size), slimecclSuccess) << threadError();
  EXPECT_EQ(size, bytes);
  return got;
}

TEST(ShmPaths, ProcessesCopyFromASharedBufferWithMemcpyFromItsMapping) {
  // 20000 bytes: above the shared pull size (16 KiB); a shared buffer is pulled from the
  // receiver's mapping, not by the kernel. Each round's buffer is new, and the freed one is
  // unmapped here.
  for (size_t bytes : {size_t{20000}, size_t{3 * 1024 * 1024 + 5}}) {
    Receiver rx;
    const int rounds = 3;
    pid_t child = forkSharedSender(rx.handle, bytes, rounds, false);
    rx.acceptOne();
    ASSERT_EQ(rx.conn->mode, SingleCopyMode::CrossMemory);
    for (int round = 0; round < rounds; ++round) EXPECT_EQ(receiveOne(rx.conn, bytes), pattern(bytes, round)) << round;
    EXPECT_EQ(rx.conn->pullsDone, static_cast<uint64_t>(rounds));
    EXPECT_EQ(rx.conn->fifo.header()->tail.load(), 0u);
    EXPECT_FALSE(rx.conn->sharedMapRefused);
    EXPECT_EQ(rx.conn->peerMappings.size(), 1u);
    EXPECT_EQ(exitCodeOf(child), 0);
  }
}

TEST(ShmPaths, ASharedBufferThatCannotBeMappedIsCopiedByTheKernel) {
  Receiver rx;
  const size_t bytes = 100000;
  pid_t child = forkSharedSender(rx.handle, bytes, 1, true);
  rx.acceptOne();
  EXPECT_EQ(receiveOne(rx.conn, bytes), pattern(bytes, 0));
  EXPECT_EQ(rx.conn->pullsDone, 1u);
  EXPECT_TRUE(rx.conn->sharedMapRefused);
  EXPECT_EQ(rx.conn->peerMappings.size(), 0u);
  EXPECT_EQ(exitCodeOf(child), 0);
}

}  // namespace
}  // namespace slimeccl
