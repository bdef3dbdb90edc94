// The socket module's receiving side on raw bytes from loopback connections: the StreamHello that
// opens each stream, with its proof of the comm's secret (accept; the listener holds the known
// secret and publishes the known challenge, so seeds carry valid proofs, and takes each connection
// id once, so a replayed hello is dropped), and the 64-bit length header in front of every
// message (irecv).
// Input: a 16-bit receive size, then up to three records, each the bytes one connection sends.
// Whatever arrives, sizes stay within the receive; once the senders reset their connections every
// receive ends (done or failed); and closing the listener leaves no file descriptor behind.
#include <cstring>
#include <vector>

#include "net/net.h"
#include "net/socket/socket_wire.h"
#include "src/base/error.h"
#include "src/base/sys/sockaddr.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/input_records.h"
#include "tests/fuzz/known_secret.h"
#include "tests/fuzz/open_fds.h"
#include "tests/fuzz/socket_io.h"

namespace {

using namespace slimeccl;

constexpr size_t kMaxConnections = 3;
constexpr int kAcceptCalls = 8;
constexpr int kMessagesPerConn = 3;
constexpr int kTestCalls = 64;

// One accepted connection and the receive it has posted, if that has not ended yet.
struct Receiver {
  void* conn;
  std::vector<char> buf;
  void* request = nullptr;
  int messages = 0;
  bool broken = false;  // a receive failed: the connection is out of step and takes no more
};

// Tests the posted receive up to kTestCalls times; true when it ended (done or failed).
bool settle(NetModule* net, Receiver* r) {
  bool done = false;
  size_t size = 0;
  for (int t = 0; t < kTestCalls; ++t) {
    slimecclResult_t rc = net->test(r->request, &done, &size);
    if (rc != slimecclSuccess) {
      FUZZ_REQUIRE(!threadError().empty(), "a failed receive has no sentence");
      r->request = nullptr;
      r->broken = true;
      return true;
    }
    if (done) {
      FUZZ_REQUIRE(size <= r->buf.size(), "a message larger than the receive was delivered");
      r->request = nullptr;
      return true;
    }
  }
  return false;
}

// Receives messages while they arrive whole; leaves the first one still waiting posted.
void receiveWhatArrived(NetModule* net, Receiver* r) {
  while (!r->broken && r->request == nullptr && r->messages < kMessagesPerConn) {
    FUZZ_REQUIRE(
        net->irecv(r->conn, r->buf.data(), r->buf.size(), &r->request) == slimecclSuccess && r->request != nullptr,
        "irecv refused a receive");
    ++r->messages;
    if (!settle(net, r)) return;
  }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Loopback only: the fuzzer talks to itself.
  setenv("SLIMECCL_SOCKET_IFNAME", "=lo", 1);
  return 0;
}

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t recvSize = data[0] | (static_cast<size_t>(data[1]) << 8);
  std::vector<std::string> records = fuzz::splitRecords(data + 2, size - 2, kMaxConnections);

  int fdsBefore = fuzz::countOpenFds();
  NetModule* net = socketNetModule();
  char handle[SLIMECCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  NetContext ctx;
  ctx.auth = &fuzz::knownNetAuth();
  FUZZ_REQUIRE(net->listen(ctx, handle, &listenComm) == slimecclSuccess, "cannot listen on loopback");
  SocketHandle h;
  memcpy(&h, handle, sizeof(h));
  FUZZ_REQUIRE(h.magic == kSocketHandleMagic && memcmp(h.nonce, fuzz::knownChallenge().bytes, sizeof(h.nonce)) == 0,
               "the listener does not publish the known challenge");

  std::vector<int> clients;
  for (const std::string& bytes : records) {
    clients.push_back(fuzz::connectTo(h.addr));
    fuzz::sendAll(clients.back(), bytes);
  }
  std::vector<Receiver> receivers;
  for (int call = 0; call < kAcceptCalls; ++call) {
    void* conn = nullptr;
    FUZZ_REQUIRE(net->accept(listenComm, &conn) == slimecclSuccess, "accept failed on junk");
    if (conn != nullptr) receivers.push_back(Receiver{conn, std::vector<char>(recvSize)});
  }
  FUZZ_REQUIRE(receivers.size() <= records.size(), "more connections than were made");
  for (Receiver& r : receivers) receiveWhatArrived(net, &r);

  // Once the senders are gone, nothing may wait any longer.
  for (int fd : clients) fuzz::closeWithReset(fd);
  for (Receiver& r : receivers) {
    if (r.request != nullptr) FUZZ_REQUIRE(settle(net, &r), "a receive from a reset connection never ended");
    net->closeRecv(r.conn);
  }
  void* late = nullptr;
  for (int call = 0; call < kAcceptCalls && late == nullptr; ++call)
    FUZZ_REQUIRE(net->accept(listenComm, &late) == slimecclSuccess, "accept failed on reset connections");
  if (late != nullptr) net->closeRecv(late);
  net->closeListen(listenComm);
  FUZZ_REQUIRE(fuzz::countOpenFds() == fdsBefore, "a file descriptor outlived the listener");
  return 0;
}
