// The ib module's side channel as its listener reads it (IbSetupGate), on raw bytes from loopback
// connections: each connection's setup record, with its sender's proof of the comm's secret (the
// gate holds the known secret and publishes the known challenge, so seeds carry valid proofs).
// Input: up to three records, each the bytes one connection sends.
// Whatever arrives, a record is handed on only when its proof holds for its claim, a connection id
// is handed on at most once (a replayed record is dropped), no more records are handed on than
// connections were made, and closing the gate leaves no file descriptor behind.
#include <unistd.h>

#include <unordered_set>
#include <vector>

#include "net/ib/setup_gate.h"
#include "net/ib/side_channel.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/input_records.h"
#include "tests/fuzz/known_secret.h"
#include "tests/fuzz/open_fds.h"
#include "tests/fuzz/socket_io.h"

namespace {

using namespace slimeccl;

constexpr size_t kMaxConnections = 3;
constexpr int kNextCalls = 8;

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Loopback only: the fuzzer talks to itself.
  setenv("SLIMECCL_SOCKET_IFNAME", "=lo", 1);
  return 0;
}

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> records = fuzz::splitRecords(data, size, kMaxConnections);

  const int fdsBefore = fuzz::countOpenFds();
  SockAddr addr;
  int listenFd = -1;
  FUZZ_REQUIRE(sideListen(&addr, &listenFd) == slimecclSuccess, "cannot listen on loopback");
  const NetAuth& auth = fuzz::knownNetAuth();
  std::vector<int> clients;
  {
    IbSetupGate gate(listenFd, 0, &auth, fuzz::knownChallenge().bytes);
    for (const std::string& bytes : records) {
      clients.push_back(fuzz::connectTo(addr));
      fuzz::sendAll(clients.back(), bytes);
      fuzz::waitDelivered(clients.back(), 1000);
    }
    std::unordered_set<uint64_t> handedOn;
    for (int call = 0; call < kNextCalls; ++call) {
      int fd = -1;
      IbSetup setup;
      gate.next(&fd, &setup);
      if (fd < 0) continue;
      FUZZ_REQUIRE(setup.magic == kIbSetupMagic, "a record without the setup magic was handed on");
      FUZZ_REQUIRE(auth.holds(claimOf(setup), fuzz::knownChallenge().bytes, setup.proof),
                   "a record whose proof does not hold was handed on");
      FUZZ_REQUIRE(handedOn.insert(setup.connection).second, "a connection id was handed on twice");
      close(fd);
    }
    FUZZ_REQUIRE(handedOn.size() <= records.size(), "more records handed on than connections were made");
  }
  for (int fd : clients) fuzz::closeWithReset(fd);
  FUZZ_REQUIRE(fuzz::countOpenFds() == fdsBefore, "a file descriptor outlived the gate");
  return 0;
}
