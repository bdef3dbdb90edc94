// The ib module's side channel refuses, before any verbs object is made, a sender that cannot prove
// the comm's secret for its claim: another secret, a setup record replayed from an earlier
// connection, or one whose connection id was changed under its proof. Each drop is logged with the
// listener's rank, and the gate goes on handing on senders that prove themselves.
#include "net/ib/setup_gate.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "net/ib/side_channel.h"
#include "src/base/error.h"
#include "src/link/secret_net_auth.h"
#include "tests/unit/listener_auths.h"
#include "tests/unit/test_secrets.h"
#include "tests/unit/text_search.h"

namespace slimeccl {
namespace {

constexpr const char* kDropWarning =
    "rank 2 slimeccl WARN ib: dropped a side-channel connection that did not introduce and prove itself";

struct IbSetupGateTest : ::testing::Test {
  void SetUp() override {
    setenv("SLIMECCL_SOCKET_IFNAME", "=lo", 1);
    ASSERT_TRUE(auths.publishFreshNonce());
    int fd = -1;
    ASSERT_EQ(sideListen(&addr, &fd), slimecclSuccess) << threadError();
    gate = std::make_unique<IbSetupGate>(fd, 2, &auth, auth.listenNonce());
  }
  void TearDown() override {
    gate.reset();
    for (int fd : fds) close(fd);
    unsetenv("SLIMECCL_SOCKET_IFNAME");
  }

  // Rank 1's setup record for connection `connection`, proved with `by`.
  IbSetup setupFrom(const NetAuth& by, uint64_t connection) const {
    IbSetup s{};
    s.magic = kIbSetupMagic;
    s.version = kIbSetupVersion;
    s.rank = 1;
    s.kind = static_cast<uint32_t>(ConnKind::Data);
    s.connection = connection;
    by.prove(claimOf(s), auth.listenNonce(), s.proof);
    return s;
  }
  void sendRaw(const IbSetup& setup) {
    const int fd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    ASSERT_EQ(connect(fd, &addr.u.sa, addr.length()), 0) << strerror(errno);
    ASSERT_EQ(send(fd, &setup, sizeof(setup), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(setup)));
  }
  // The connection id of the next record handed on within `ms`; 0 when none was.
  uint64_t handedOnWithin(int ms) {
    for (auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
         std::chrono::steady_clock::now() < end;) {
      int fd = -1;
      IbSetup setup;
      gate->next(&fd, &setup);
      if (fd >= 0) {
        fds.push_back(fd);
        return setup.connection;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 0;
  }

  ListenerAuths auths{5};
  const SecretNetAuth& auth = auths.auth;
  const SecretNetAuth& intruderAuth = auths.intruderAuth;
  SockAddr addr;
  std::unique_ptr<IbSetupGate> gate;
  std::vector<int> fds;
};

TEST_F(IbSetupGateTest, HandsOnAProvedSenderOnlyOnce) {
  const IbSetup proved = setupFrom(auth, 77);
  sendRaw(proved);
  EXPECT_EQ(handedOnWithin(5000), 77u) << "a proved sender was not handed on";

  testing::internal::CaptureStderr();
  sendRaw(proved);
  EXPECT_EQ(handedOnWithin(300), 0u) << "a replayed setup record was handed on";
  IbSetup moved = proved;
  moved.connection = 78;
  sendRaw(moved);
  sendRaw(setupFrom(intruderAuth, 79));
  EXPECT_EQ(handedOnWithin(300), 0u)
      << "a record changed under its proof, or proved with another secret, was handed on";
  EXPECT_EQ(countOf(testing::internal::GetCapturedStderr(), kDropWarning), 3u);

  sendRaw(setupFrom(auth, 80));
  EXPECT_EQ(handedOnWithin(5000), 80u) << "the gate stopped handing on proved senders";
}

}  // namespace
}  // namespace slimeccl
