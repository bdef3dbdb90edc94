// The bootstrap root under junk, slow and idle connections, and interface selection errors.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "include/slimeccl.h"
#include "src/bootstrap/unique_id.h"

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
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  UniqueIdContents contents;
  ASSERT_EQ(decodeUniqueId(id, &contents), slimecclSuccess);
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
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  UniqueIdContents contents;
  ASSERT_EQ(decodeUniqueId(id, &contents), slimecclSuccess);
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

TEST_F(Bootstrap, UnknownInterfaceIsAClearError) {
  setenv("SLIMECCL_SOCKET_IFNAME", "nosuchif", 1);
  slimecclUniqueId id;
  EXPECT_EQ(slimecclGetUniqueId(&id), slimecclInvalidArgument);
  std::string error = slimecclGetLastError(nullptr);
  EXPECT_NE(error.find("SLIMECCL_SOCKET_IFNAME='nosuchif' matches no usable interface"), std::string::npos) << error;
  EXPECT_NE(error.find("lo"), std::string::npos) << error;
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
