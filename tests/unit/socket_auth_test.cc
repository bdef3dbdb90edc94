// The socket module's streams prove the comm's secret in the first bytes they send: a stream whose
// proof was made with another secret, or a hello replayed from an earlier connection, is dropped at
// accept (with a warning naming the listener's rank) before anything after its hello is read, and
// a stream that proves it is accepted beside it and carries data.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "net/net.h"
#include "net/socket/socket_wire.h"
#include "src/base/error.h"
#include "src/link/secret_net_auth.h"
#include "tests/unit/text_search.h"
#include "tests/unit/listener_auths.h"
#include "tests/unit/test_secrets.h"

namespace slimeccl {
namespace {

constexpr const char* kDropWarning =
    "rank 0 slimeccl WARN socket: dropped a connection that did not introduce and prove itself";

struct AuthedSocket : ::testing::Test {
  void SetUp() override {
    setenv("SLIMECCL_SOCKET_IFNAME", "=lo", 1);
    ASSERT_TRUE(auths.publishFreshNonce());
    ASSERT_EQ(net->listen(NetContext{bell.get(), 0, 0, false, nullptr, &auth}, handle, &listenComm), slimecclSuccess)
        << threadError();
    memcpy(&listened, handle, sizeof(listened));
  }
  void TearDown() override {
    for (int fd : rawFds) close(fd);
    net->closeListen(listenComm);
    unsetenv("SLIMECCL_SOCKET_IFNAME");
  }

  // Connects as rank 1 with `by`; the connection, whatever the listener makes of it.
  void* connectWith(const NetAuth& by) {
    void* conn = nullptr;
    const NetContext ctx{bell.get(), 1, 0, false, nullptr, &by};
    while (conn == nullptr)
      EXPECT_EQ(net->connect(ctx, handle, ConnKind::Ctrl, &conn), slimecclSuccess) << threadError();
    return conn;
  }
  // Opens a plain TCP connection to the listener and sends `hello` on it, as someone who read a
  // hello off the wire would.
  void sendRaw(const StreamHello& hello) {
    const int fd = socket(listened.addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    rawFds.push_back(fd);
    ASSERT_EQ(connect(fd, &listened.addr.u.sa, listened.addr.length()), 0) << strerror(errno);
    ASSERT_EQ(send(fd, &hello, sizeof(hello), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(hello)));
  }
  // Accepts for up to `ms`; nullptr when no stream group completed.
  void* acceptFor(int ms) {
    void* conn = nullptr;
    for (auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
         conn == nullptr && std::chrono::steady_clock::now() < end;) {
      EXPECT_EQ(net->accept(listenComm, &conn), slimecclSuccess) << threadError();
      if (conn == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return conn;
  }
  // A proved connection is accepted and carries a message.
  void expectAProvedConnectionCarriesData() {
    void* send = connectWith(auth);
    void* recv = acceptFor(5000);
    ASSERT_NE(recv, nullptr) << "a stream that proved the secret was not accepted";
    const char message[] = "proved";
    char got[sizeof(message)] = {};
    void* sending = nullptr;
    void* receiving = nullptr;
    ASSERT_EQ(net->isend(send, message, sizeof(message), &sending), slimecclSuccess);
    ASSERT_EQ(net->irecv(recv, got, sizeof(got), &receiving), slimecclSuccess);
    bool sent = false, received = false;
    size_t sentSize = 0, receivedSize = 0;
    for (int i = 0; i < 100000 && !(sent && received); ++i) {
      if (!sent) {
        ASSERT_EQ(net->test(sending, &sent, &sentSize), slimecclSuccess) << threadError();
      }
      if (!received) {
        ASSERT_EQ(net->test(receiving, &received, &receivedSize), slimecclSuccess) << threadError();
      }
    }
    ASSERT_TRUE(sent && received);
    EXPECT_EQ(receivedSize, sizeof(message));
    EXPECT_STREQ(got, message);
    net->closeSend(send);
    net->closeRecv(recv);
  }

  NetModule* net = socketNetModule();
  std::unique_ptr<Bell> bell{Bell::create()};
  ListenerAuths auths{1};
  const SecretNetAuth& auth = auths.auth;
  const SecretNetAuth& intruderAuth = auths.intruderAuth;
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE] = {};
  SocketHandle listened{};
  void* listenComm = nullptr;
  std::vector<int> rawFds;
};

TEST_F(AuthedSocket, AStreamWithoutTheSecretIsDroppedAndAProvedOneCarriesData) {
  testing::internal::CaptureStderr();
  void* intruder = connectWith(intruderAuth);
  EXPECT_EQ(acceptFor(200), nullptr) << "a stream that proved another secret was accepted";
  net->closeSend(intruder);
  EXPECT_EQ(countOf(testing::internal::GetCapturedStderr(), kDropWarning), 1u);
  expectAProvedConnectionCarriesData();
}

// A hello read off the wire opens nothing again: sent as it was on a second connection, or with
// its connection id or its place changed under the same proof, it is dropped and logged, and the
// listener goes on accepting proved connections.
TEST_F(AuthedSocket, AReplayedHelloIsDroppedAndTheListenerGoesOn) {
  const StreamHello hello = makeStreamHello(&auth, listened.nonce, 1, static_cast<uint32_t>(ConnKind::Ctrl), 42, 0, 1);
  sendRaw(hello);
  void* first = acceptFor(5000);
  ASSERT_NE(first, nullptr) << "a proved hello was not accepted";
  net->closeRecv(first);

  testing::internal::CaptureStderr();
  sendRaw(hello);
  EXPECT_EQ(acceptFor(300), nullptr) << "a replayed hello opened its connection again";
  StreamHello moved = hello;
  moved.connection = 43;
  sendRaw(moved);
  StreamHello widened = hello;
  widened.streams = 2;
  sendRaw(widened);
  EXPECT_EQ(acceptFor(300), nullptr) << "a hello changed under its proof was accepted";
  EXPECT_EQ(countOf(testing::internal::GetCapturedStderr(), kDropWarning), 3u);
  expectAProvedConnectionCarriesData();
}

// The proof covers the whole claim (rank, kind, connection id, place) and the listener's nonce.
TEST(SecretNetAuth, AProofHoldsForItsWholeClaimAndNonceOnly) {
  const CommSecret secret = secretOf(7);
  SecretNetAuth auth(&secret);
  Nonce nonce, other;
  ASSERT_TRUE(makeNonce(&nonce) && makeNonce(&other));
  const NetClaim claim{3, 1, 0x1234, 5};
  uint8_t proof[NetAuth::kProofBytes];
  auth.prove(claim, nonce.bytes, proof);
  EXPECT_TRUE(auth.holds(claim, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(NetClaim{4, 1, 0x1234, 5}, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(NetClaim{3, 0, 0x1234, 5}, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(NetClaim{3, 1, 0x1235, 5}, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(NetClaim{3, 1, 0x1234, 6}, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(claim, other.bytes, proof));
}

}  // namespace
}  // namespace slimeccl
