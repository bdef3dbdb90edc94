#include "tests/fuzz/fake_root.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/known_secret.h"
#include "tests/fuzz/socket_io.h"

namespace slimeccl::fuzz {
namespace {

constexpr int kPeerTimeoutMs = 5000;

}  // namespace

FakeRoot::FakeRoot() {
  listenFd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  FUZZ_REQUIRE(listenFd_ >= 0, "cannot create the fake root's socket");
  addr_.u.v4.sin_family = AF_INET;
  addr_.u.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = addr_.length();
  FUZZ_REQUIRE(bind(listenFd_, &addr_.u.sa, len) == 0 && listen(listenFd_, 16) == 0 &&
                   getsockname(listenFd_, &addr_.u.sa, &len) == 0,
               "cannot listen on loopback for the fake root");
  thread_ = std::thread(&FakeRoot::serve, this);
  thread_.detach();
}

void FakeRoot::expect(int nranks, int rank, std::string reply) {
  std::lock_guard<std::mutex> lock(mutex_);
  nranks_ = nranks;
  rank_ = rank;
  reply_ = std::move(reply);
  served_ = false;
}

bool FakeRoot::waitServed(int timeoutMs) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return served_; });
}

void FakeRoot::serve() {
  for (;;) {
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    answer(fd);
    // The reset ends the rank's read like a close would, and leaves no TIME_WAIT on either side.
    waitDelivered(fd, kPeerTimeoutMs);
    closeWithReset(fd);
    std::lock_guard<std::mutex> lock(mutex_);
    served_ = true;
    changed_.notify_all();
  }
}

void FakeRoot::answer(int fd) {
  // As the root does: the challenge first, then the rank's hello must prove the secret over it.
  const std::string challenge = [] {
    const WireHeader h{kWireMagic, static_cast<uint32_t>(WireType::Challenge), sizeof(ChallengePayload), 0};
    const ChallengePayload c{knownChallenge()};
    return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) +
           std::string(reinterpret_cast<const char*>(&c), sizeof(c));
  }();
  sendAll(fd, challenge);
  char hello[sizeof(WireHeader) + sizeof(HelloPayload)];
  FUZZ_REQUIRE(recvAll(fd, hello, sizeof(hello), kPeerTimeoutMs) == sizeof(hello),
               "the rank did not send a whole hello");
  HelloPayload parsed;
  FUZZ_REQUIRE(parseHello(hello, sizeof(hello), knownSecret(), knownChallenge(), &parsed) == slimecclSuccess,
               "the rank's hello does not pass the root's checks");
  std::string reply;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    FUZZ_REQUIRE(parsed.nranks == nranks_ && parsed.rank == rank_, "the rank's hello names another rank");
    reply = reply_;
  }
  // The rank may stop reading at a bad header and close: a short send is part of the scenario.
  sendAll(fd, reply);
}

}  // namespace slimeccl::fuzz
