// The socket module's streams prove the comm's secret in the first bytes they send: a stream whose
// proof was made with another secret is dropped at accept, before anything after its hello is
// read, and a stream that proves it is accepted beside it and carries data.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "net/net.h"
#include "src/error.h"
#include "src/transport/secret_net_auth.h"
#include "tests/unit/test_secrets.h"

namespace slimeccl {
namespace {

struct AuthedSocket : ::testing::Test {
  void SetUp() override {
    setenv("SLIMECCL_SOCKET_IFNAME", "=lo", 1);
    Nonce nonce;
    ASSERT_TRUE(makeNonce(&nonce));
    auth.setListenNonce(nonce);
    intruderAuth.setListenNonce(nonce);
    ASSERT_EQ(net->listen(NetContext{bell.get(), 0, 0, false, nullptr, &auth}, handle, &listenComm), slimecclSuccess)
        << threadError();
  }
  void TearDown() override {
    net->closeListen(listenComm);
    unsetenv("SLIMECCL_SOCKET_IFNAME");
  }

  // Connects as rank 1 with `by`; the connection, whatever the listener makes of it.
  void* connectWith(const NetAuth& by) {
    void* conn = nullptr;
    const NetContext ctx{bell.get(), 1, 0, false, nullptr, &by};
    while (conn == nullptr) EXPECT_EQ(net->connect(ctx, handle, ConnKind::Ctrl, &conn), slimecclSuccess) << threadError();
    return conn;
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

  NetModule* net = socketNetModule();
  std::unique_ptr<Bell> bell{Bell::create()};
  CommSecret secret = secretOf(1), otherSecret = secretOf(2);
  SecretNetAuth auth{&secret}, intruderAuth{&otherSecret};
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
};

TEST_F(AuthedSocket, AStreamWithoutTheSecretIsDroppedAndAProvedOneCarriesData) {
  void* intruder = connectWith(intruderAuth);
  EXPECT_EQ(acceptFor(200), nullptr) << "a stream that proved another secret was accepted";
  net->closeSend(intruder);

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

// The proof binds the rank and the connection's kind, and the listener's nonce.
TEST(SecretNetAuth, AProofHoldsForItsRankKindAndNonceOnly) {
  const CommSecret secret = secretOf(7);
  SecretNetAuth auth(&secret);
  Nonce nonce, other;
  ASSERT_TRUE(makeNonce(&nonce) && makeNonce(&other));
  uint8_t proof[NetAuth::kProofBytes];
  auth.prove(3, 1, nonce.bytes, proof);
  EXPECT_TRUE(auth.holds(3, 1, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(4, 1, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(3, 0, nonce.bytes, proof));
  EXPECT_FALSE(auth.holds(3, 1, other.bytes, proof));
}

}  // namespace
}  // namespace slimeccl
