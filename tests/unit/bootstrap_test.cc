// The bootstrap root and ring under junk, slow and idle connections, wrong and replayed proofs, and
// interface selection errors.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "include/slimeccl.h"
#include "src/bootstrap/auth.h"
#include "src/bootstrap/ring.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"
#include "tests/unit/text_search.h"
#include "tests/unit/test_secrets.h"

namespace slimeccl {
namespace {

int connectTo(const SockAddr& addr) {
  int fd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(connect(fd, &addr.u.sa, addr.length()), 0) << strerror(errno);
  return fd;
}

class Bootstrap : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SLIMECCL_SOCKET_IFNAME", "lo", 1); }
  void TearDown() override {
    unsetenv("SLIMECCL_SOCKET_IFNAME");
    unsetenv("SLIMECCL_TIMEOUT_MS");
  }
};

// A unique id (its root runs in this process) and what it holds.
void makeId(slimecclUniqueId* id, UniqueIdContents* contents) {
  ASSERT_EQ(slimecclGetUniqueId(id), slimecclSuccess);
  ASSERT_EQ(decodeUniqueId(*id, contents), slimecclSuccess);
}

// Ranks as threads; returns each rank's result.
std::vector<slimecclResult_t> initRanks(const slimecclUniqueId& id, int nranks) {
  std::vector<slimecclResult_t> results(nranks);
  std::vector<slimecclComm_t> comms(nranks, nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r)
    threads.emplace_back([&, r] { results[r] = slimecclCommInitRank(&comms[r], nranks, id, r); });
  for (auto& t : threads) t.join();
  for (slimecclComm_t c : comms)
    if (c != nullptr) slimecclCommDestroy(c);
  return results;
}

TEST_F(Bootstrap, JunkSlowAndIdleConnectionsDoNotDisturbInit) {
  slimecclUniqueId id;
  UniqueIdContents contents;
  ASSERT_NO_FATAL_FAILURE(makeId(&id, &contents));
  std::vector<int> fds;
  // Idle: connects and says nothing.
  fds.push_back(connectTo(contents.root));
  // Junk: a burst of garbage, larger than any hello.
  int junk = connectTo(contents.root);
  std::vector<char> garbage(1 << 16, 'x');
  ASSERT_GT(send(junk, garbage.data(), garbage.size(), MSG_NOSIGNAL | MSG_DONTWAIT), 0);
  fds.push_back(junk);
  // Slow: a valid-looking start that never completes.
  int slow = connectTo(contents.root);
  uint32_t magic = 0x534c4257;
  ASSERT_EQ(send(slow, &magic, 2, MSG_NOSIGNAL), 2);
  fds.push_back(slow);
  // A hello with the wrong secret is dropped, the good ranks still get in.
  for (auto r : initRanks(id, 3)) EXPECT_EQ(r, slimecclSuccess);
  for (int fd : fds) close(fd);
}

TEST_F(Bootstrap, WrongSecretIsRefused) {
  // The root answers at once; the bound only has to outlast a slow (sanitized, loaded) start.
  setenv("SLIMECCL_TIMEOUT_MS", "10000", 1);
  slimecclUniqueId id;
  UniqueIdContents contents;
  ASSERT_NO_FATAL_FAILURE(makeId(&id, &contents));
  contents.secret.bytes[0] ^= 0xff;
  slimecclUniqueId forged;
  encodeUniqueId(contents, &forged);
  slimecclComm_t comm = nullptr;
  // The root drops the connection: the rank cannot join and says why.
  slimecclResult_t rc = slimecclCommInitRank(&comm, 1, forged, 0);
  EXPECT_NE(rc, slimecclSuccess);
  EXPECT_EQ(comm, nullptr);
  std::string error = slimecclGetLastError(nullptr);
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("wrong secret"), std::string::npos) << error;
}

// A root of the test's own: it challenges a joining rank and keeps what the rank sends back. The
// hello proves the secret over the challenge, and the secret's bytes appear nowhere in it.
TEST_F(Bootstrap, HelloProvesTheSecretWithoutSendingIt) {
  setenv("SLIMECCL_TIMEOUT_MS", "3000", 1);
  int listenFd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listenFd, 0);
  UniqueIdContents contents{};
  contents.root.u.v4.sin_family = AF_INET;
  contents.root.u.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = contents.root.length();
  ASSERT_TRUE(bind(listenFd, &contents.root.u.sa, len) == 0 && listen(listenFd, 4) == 0 &&
              getsockname(listenFd, &contents.root.u.sa, &len) == 0);
  for (size_t i = 0; i < kSecretBytes; ++i) contents.secret.bytes[i] = static_cast<uint8_t>(0x80 + i);
  slimecclUniqueId id;
  encodeUniqueId(contents, &id);
  std::thread rank([&] {
    slimecclComm_t comm = nullptr;
    EXPECT_NE(slimecclCommInitRank(&comm, 2, id, 1), slimecclSuccess);
  });
  const int fd = accept(listenFd, nullptr, nullptr);
  ASSERT_GE(fd, 0);
  Nonce challenge;
  ASSERT_TRUE(makeNonce(&challenge));
  const WireHeader header{kWireMagic, static_cast<uint32_t>(WireType::Challenge), sizeof(ChallengePayload), 0};
  ASSERT_EQ(send(fd, &header, sizeof(header), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(header)));
  ASSERT_EQ(send(fd, &challenge, sizeof(challenge), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(challenge)));
  std::vector<char> hello(sizeof(WireHeader) + sizeof(HelloPayload));
  size_t got = 0;
  while (got < hello.size()) {
    const ssize_t n = recv(fd, hello.data() + got, hello.size() - got, 0);
    ASSERT_GT(n, 0) << "the rank closed before its whole hello";
    got += static_cast<size_t>(n);
  }
  close(fd);
  close(listenFd);
  rank.join();
  HelloPayload parsed;
  EXPECT_EQ(parseHello(hello.data(), hello.size(), contents.secret, challenge, &parsed), slimecclSuccess);
  EXPECT_EQ(parsed.rank, 1);
  const std::string bytes(hello.begin(), hello.end());
  const std::string secret(reinterpret_cast<const char*>(contents.secret.bytes), kSecretBytes);
  EXPECT_EQ(bytes.find(secret.substr(0, 8)), std::string::npos) << "the secret's first bytes are on the wire";
  EXPECT_EQ(bytes.find(secret.substr(kSecretBytes - 8)), std::string::npos)
      << "the secret's last bytes are on the wire";
}

// An intruder reaches rank 0's ring listener first and answers its challenge as rank 1, with the
// proof `forge` makes of the challenge: it is dropped, with a warning, and the ring forms with the
// real rank 1 and carries data.
void expectRingDropsAnIntruder(const CommSecret& secret, const std::function<Proof(const Nonce&)>& forge) {
  BootstrapRing rings[2];
  std::vector<SockAddr> addrs(2);
  ASSERT_EQ(rings[0].listen(&addrs[0]), slimecclSuccess);
  ASSERT_EQ(rings[1].listen(&addrs[1]), slimecclSuccess);
  testing::internal::CaptureStderr();
  const int intruder = connectTo(addrs[0]);
  std::thread intruding([&] {
    char challenge[sizeof(WireHeader) + sizeof(ChallengePayload)];
    ASSERT_EQ(recv(intruder, challenge, sizeof(challenge), MSG_WAITALL), static_cast<ssize_t>(sizeof(challenge)));
    Nonce nonce;
    ASSERT_EQ(parseChallenge(challenge, sizeof(challenge), &nonce), slimecclSuccess);
    struct {
      WireHeader header;
      RingHelloPayload hello;
    } forged{{kWireMagic, static_cast<uint32_t>(WireType::RingHello), sizeof(RingHelloPayload), 0},
             {forge(nonce), 1, 0}};
    ASSERT_EQ(send(intruder, &forged, sizeof(forged), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(forged)));
    char byte;
    EXPECT_EQ(recv(intruder, &byte, 1, 0), 0) << "the intruder's connection should be closed";
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the intruder is accepted first
  slimecclResult_t results[2];
  const Deadline deadline = Deadline::afterMs(10000);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] { results[r] = rings[r].form(addrs, r, secret, deadline, nullptr); });
  for (auto& t : ranks) t.join();
  intruding.join();
  close(intruder);
  EXPECT_EQ(countOf(testing::internal::GetCapturedStderr(),
                    "rank 0 slimeccl WARN bootstrap ring: dropped a connection that is not rank 1 of this comm"),
            1u);
  EXPECT_EQ(results[0], slimecclSuccess);
  EXPECT_EQ(results[1], slimecclSuccess);
  int slots[2][2] = {{7, 0}, {0, 9}};
  ranks.clear();
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] { results[r] = rings[r].allgather(slots[r], sizeof(int), deadline, nullptr); });
  for (auto& t : ranks) t.join();
  EXPECT_TRUE(results[0] == slimecclSuccess && results[1] == slimecclSuccess);
  EXPECT_TRUE(slots[0][1] == 9 && slots[1][0] == 7) << "the ring carries data between the real ranks";
}

TEST_F(Bootstrap, RingDropsAConnectionThatCannotProveTheSecret) {
  const CommSecret secret = secretOf(0), wrong = secretOf(1);
  expectRingDropsAnIntruder(
      secret, [&](const Nonce& challenge) { return proveSecret(wrong, ProofPurpose::RingHello, 1, challenge); });
}

// Rank 1's hello read off the wire at an earlier ring: the right secret, over another challenge.
TEST_F(Bootstrap, RingDropsAHelloReplayedFromAnEarlierChallenge) {
  const CommSecret secret = secretOf(0);
  Nonce earlier;
  ASSERT_TRUE(makeNonce(&earlier));
  const Proof captured = proveSecret(secret, ProofPurpose::RingHello, 1, earlier);
  expectRingDropsAnIntruder(secret, [&](const Nonce&) { return captured; });
}

// A rank's hello read off the wire at an earlier join: it proved the secret over another
// challenge, so the root drops it, says so, and the real ranks still join.
TEST_F(Bootstrap, RootDropsAHelloReplayedFromAnEarlierChallenge) {
  setenv("SLIMECCL_TIMEOUT_MS", "10000", 1);
  slimecclUniqueId id;
  UniqueIdContents contents;
  ASSERT_NO_FATAL_FAILURE(makeId(&id, &contents));
  Nonce earlier;
  ASSERT_TRUE(makeNonce(&earlier));
  struct {
    WireHeader header;
    HelloPayload hello;
  } captured{{kWireMagic, static_cast<uint32_t>(WireType::Hello), sizeof(HelloPayload), 0}, {}};
  captured.hello.proof = proveSecret(contents.secret, ProofPurpose::RootHello, 0, earlier);
  captured.hello.nranks = 3;
  captured.hello.rank = 2;
  captured.hello.timeoutMs = 10000;
  captured.hello.info.rank = 2;

  testing::internal::CaptureStderr();
  const int replayer = connectTo(contents.root);
  char challenge[sizeof(WireHeader) + sizeof(ChallengePayload)];
  ASSERT_EQ(recv(replayer, challenge, sizeof(challenge), MSG_WAITALL), static_cast<ssize_t>(sizeof(challenge)));
  ASSERT_EQ(send(replayer, &captured, sizeof(captured), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(captured)));
  char byte;
  // Closed (or reset: the root leaves the hello's unread part behind).
  EXPECT_LE(recv(replayer, &byte, 1, 0), 0) << "the root kept a replayed hello";
  close(replayer);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(countOf(log, "dropped connection from"), 1u) << log;
  EXPECT_EQ(countOf(log, ": no proof of the secret"), 1u) << log;
  for (auto r : initRanks(id, 3)) EXPECT_EQ(r, slimecclSuccess);
}

TEST_F(Bootstrap, UnknownInterfaceIsAClearError) {
  setenv("SLIMECCL_SOCKET_IFNAME", "nosuchif", 1);
  slimecclUniqueId id;
  EXPECT_EQ(slimecclGetUniqueId(&id), slimecclInvalidArgument);
  std::string error = slimecclGetLastError(nullptr);
  EXPECT_NE(error.find("SLIMECCL_SOCKET_IFNAME='nosuchif' matches no usable interface"), std::string::npos) << error;
  EXPECT_NE(error.find("lo"), std::string::npos) << error;
  // Each interface is named once, however many addresses it has.
  const size_t from = error.find("interfaces up: ") + strlen("interfaces up: ");
  std::vector<std::string> names;
  for (size_t at = from; at < error.size() && error[at] != ')';) {
    const size_t end = error.find_first_of(",)", at);
    names.push_back(error.substr(at, end - at));
    at = error[end] == ',' ? end + 2 : end;
  }
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]) << error;
}

TEST_F(Bootstrap, RootOutlastsTheInitTimeoutUntilTheFirstRankArrives) {
  // A job that loads a model between slimecclGetUniqueId and init must still find its root.
  setenv("SLIMECCL_TIMEOUT_MS", "300", 1);
  slimecclUniqueId id;
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  setenv("SLIMECCL_TIMEOUT_MS", "20000", 1);
  for (auto r : initRanks(id, 2)) EXPECT_EQ(r, slimecclSuccess) << slimecclGetLastError(nullptr);
}

TEST_F(Bootstrap, CommIdLetsRankZeroHostTheRoot) {
  // Find a free port, then let every rank compute the same id from the environment.
  int probe = socket(AF_INET, SOCK_STREAM, 0);
  SockAddr addr;
  ASSERT_EQ(parseHostPort("127.0.0.1:0", &addr), slimecclSuccess);
  ASSERT_EQ(bind(probe, &addr.u.sa, addr.length()), 0);
  socklen_t len = addr.length();
  getsockname(probe, &addr.u.sa, &len);
  close(probe);
  setenv("SLIMECCL_COMM_ID", addr.toString().c_str(), 1);
  setenv("SLIMECCL_COMM_SECRET", "0123456789abcdef0123456789abcdef", 1);
  slimecclUniqueId id;
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  unsetenv("SLIMECCL_COMM_ID");
  unsetenv("SLIMECCL_COMM_SECRET");
  for (auto r : initRanks(id, 4)) EXPECT_EQ(r, slimecclSuccess);
}

}  // namespace
}  // namespace slimeccl
