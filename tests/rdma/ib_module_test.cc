// The ib module's side of the net-module contract (net/net.h), driven directly in one process:
// two ranks' endpoints on the usable ports in turn, progressed by this thread, their side channels
// proving a comm secret (NetAuth). Also its GPUDirect RDMA path, with host memory standing in for
// GPU memory: what the device says it takes, small messages copied through the device memory
// access (never inline, never by the CPU), large ones registered by the route the comm chose, and
// a device that refuses the registration. Needs a verbs device; skips without one (the RDMA suite
// runs it where there is one).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/bell.h"
#include "net/net.h"
#include "src/base/error.h"
#include "src/base/sys/time.h"
#include "src/link/secret_net_auth.h"

namespace slimeccl {
namespace {

constexpr int64_t kWaitMs = 20000;

class IbModuleTest : public ::testing::Test {
 protected:
  // What a context carries beyond the rank's bell and the comm's proof (the device memory fixture's).
  virtual void prepareContext(NetContext*) {}

  void SetUp() override {
    net_ = netModuleByName("ib");
    if (net_ == nullptr) GTEST_SKIP() << "no usable verbs port: " << threadError();
    for (int i = 0; i < static_cast<int>(kSecretBytes); ++i) secret_.bytes[i] = static_cast<uint8_t>(i * 3);
    Nonce nonce;
    ASSERT_TRUE(makeNonce(&nonce));
    auth_.setListenNonce(nonce);
    for (int r = 0; r < 2; ++r) {
      bells_[r].reset(Bell::create());
      ctx_[r] = NetContext{bells_[r].get(), r, 0, false, nullptr, &auth_};
      prepareContext(&ctx_[r]);
      ASSERT_EQ(net_->listen(ctx_[r], handles_[r], &listens_[r]), slimecclSuccess) << threadError();
    }
    // One connection from rank 0 to rank 1.
    ASSERT_EQ(net_->connect(ctx_[0], handles_[1], ConnKind::Data, &send_), slimecclSuccess) << threadError();
    Deadline deadline = Deadline::afterMs(kWaitMs);
    while (recv_ == nullptr && !deadline.expired())
      ASSERT_EQ(net_->accept(listens_[1], &recv_), slimecclSuccess) << threadError();
    ASSERT_NE(recv_, nullptr);
  }
  void TearDown() override {
    if (net_ == nullptr) return;
    if (send_ != nullptr) net_->closeSend(send_);
    if (recv_ != nullptr) net_->closeRecv(recv_);
    for (void* l : listens_)
      if (l != nullptr) net_->closeListen(l);
  }

  void* post(bool sending, void* data, size_t bytes) {
    void* request = nullptr;
    slimecclResult_t rc =
        sending ? net_->isend(send_, data, bytes, &request) : net_->irecv(recv_, data, bytes, &request);
    EXPECT_EQ(rc, slimecclSuccess) << threadError();
    EXPECT_NE(request, nullptr);
    return request;
  }
  // Tests the requests in turn until all are done or one fails; returns that result.
  slimecclResult_t waitAll(std::vector<void*> requests, std::vector<size_t>* sizes = nullptr) {
    Deadline deadline = Deadline::afterMs(kWaitMs);
    std::vector<bool> done(requests.size(), false);
    if (sizes != nullptr) sizes->assign(requests.size(), 0);
    for (size_t left = requests.size(); left > 0;) {
      if (deadline.expired()) return slimecclTimeout;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (done[i]) continue;
        bool finished = false;
        size_t size = 0;
        slimecclResult_t rc = net_->test(requests[i], &finished, &size);
        if (rc != slimecclSuccess) return rc;
        if (!finished) continue;
        done[i] = true;
        if (sizes != nullptr) (*sizes)[i] = size;
        --left;
      }
    }
    return slimecclSuccess;
  }

  NetModule* net_ = nullptr;
  CommSecret secret_{};
  SecretNetAuth auth_{&secret_};
  std::unique_ptr<Bell> bells_[2];
  NetContext ctx_[2];
  char handles_[2][SLIMECCL_NET_HANDLE_MAXSIZE] = {};
  void* listens_[2] = {nullptr, nullptr};
  void* send_ = nullptr;
  void* recv_ = nullptr;
};

// A sender whose side-channel setup proves another secret is dropped by the listener, which then
// accepts a sender that proves the comm's.
TEST_F(IbModuleTest, ASenderWithoutTheSecretIsDroppedAtTheSideChannel) {
  CommSecret other = secret_;
  other.bytes[0] ^= 1;
  const SecretNetAuth intruderAuth(&other);
  const NetContext intruderCtx{bells_[0].get(), 0, 0, false, nullptr, &intruderAuth};
  void* intruder = nullptr;
  ASSERT_EQ(net_->connect(intruderCtx, handles_[1], ConnKind::Ctrl, &intruder), slimecclSuccess) << threadError();
  void* accepted = nullptr;
  Deadline shortWait = Deadline::afterMs(500);
  while (accepted == nullptr && !shortWait.expired())
    ASSERT_EQ(net_->accept(listens_[1], &accepted), slimecclSuccess) << threadError();
  EXPECT_EQ(accepted, nullptr) << "a sender that proved another secret was accepted";
  if (accepted != nullptr) net_->closeRecv(accepted);
  net_->closeSend(intruder);

  void* proved = nullptr;
  ASSERT_EQ(net_->connect(ctx_[0], handles_[1], ConnKind::Ctrl, &proved), slimecclSuccess) << threadError();
  Deadline deadline = Deadline::afterMs(kWaitMs);
  while (accepted == nullptr && !deadline.expired())
    ASSERT_EQ(net_->accept(listens_[1], &accepted), slimecclSuccess) << threadError();
  EXPECT_NE(accepted, nullptr) << "a sender that proved the secret was not accepted";
  if (accepted != nullptr) net_->closeRecv(accepted);
  net_->closeSend(proved);
}

TEST_F(IbModuleTest, ReceivesIntoLargerBuffersAndReportsTheSize) {
  // Eager, inline, rendezvous, and a rendezvous into a buffer it advertised as larger.
  const size_t sizes[] = {0, 8, 5000, 300000};
  const size_t posted[] = {64, 8, 100000, 1 << 20};
  std::vector<std::vector<char>> out, in;
  std::vector<void*> requests;
  for (size_t k = 0; k < 4; ++k) {
    out.emplace_back(sizes[k], static_cast<char>('a' + k));
    in.emplace_back(posted[k], 0);
    requests.push_back(post(false, in[k].data(), posted[k]));
  }
  for (size_t k = 0; k < 4; ++k) requests.push_back(post(true, out[k].data(), sizes[k]));
  std::vector<size_t> got;
  ASSERT_EQ(waitAll(requests, &got), slimecclSuccess) << threadError();
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(got[k], sizes[k]);
    EXPECT_EQ(got[4 + k], sizes[k]);
    EXPECT_EQ(memcmp(in[k].data(), out[k].data(), sizes[k]), 0) << "message " << k;
  }
}

TEST_F(IbModuleTest, MatchesMessagesInOrderWhenReceivesComeLate) {
  std::vector<std::vector<char>> out, in;
  std::vector<void*> sends, recvs;
  for (int k = 0; k < 40; ++k) out.emplace_back(k % 2 ? 70000 : 100, static_cast<char>(k));
  for (auto& m : out) sends.push_back(post(true, m.data(), m.size()));
  for (auto& m : out) {
    in.emplace_back(m.size(), -1);
    recvs.push_back(post(false, in.back().data(), m.size()));
  }
  sends.insert(sends.end(), recvs.begin(), recvs.end());
  ASSERT_EQ(waitAll(sends), slimecclSuccess) << threadError();
  for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(in[k], out[k]) << "message " << k;
}

TEST_F(IbModuleTest, AnswersRetryBeyondItsInFlightLimit) {
  std::vector<char> byte(1, 'x');
  std::vector<void*> sends;
  void* request = nullptr;
  for (;;) {
    ASSERT_EQ(net_->isend(send_, byte.data(), 1, &request), slimecclSuccess);
    if (request == nullptr) break;
    sends.push_back(request);
    ASSERT_LT(sends.size(), 1000u);
  }
  EXPECT_GE(sends.size(), 16u);
  std::vector<std::vector<char>> in(sends.size(), std::vector<char>(1));
  for (auto& b : in) sends.push_back(post(false, b.data(), 1));
  EXPECT_EQ(waitAll(sends), slimecclSuccess) << threadError();
}

TEST_F(IbModuleTest, AnEagerMessageLargerThanTheReceiveIsAnError) {
  std::vector<char> out(1000, 'x'), in(100);
  void* s = post(true, out.data(), out.size());
  void* r = post(false, in.data(), in.size());
  EXPECT_EQ(waitAll({s, r}), slimecclInternalError);
  EXPECT_NE(threadError().find("arrived for a receive of 100 bytes"), std::string::npos) << threadError();
}

TEST_F(IbModuleTest, ALargeMessageForASmallReceiveIsAnErrorNotAHang) {
  // No advert comes for a receive within the eager size: the sender's announce tells the size.
  std::vector<char> out(200000, 'x'), in(100);
  void* r = post(false, in.data(), in.size());
  void* s = post(true, out.data(), out.size());
  EXPECT_EQ(waitAll({r, s}), slimecclInternalError);
  EXPECT_NE(threadError().find("a message of 200000 bytes"), std::string::npos) << threadError();
}

TEST_F(IbModuleTest, AMessageLargerThanTheAdvertisedBufferIsRefusedOnBothSides) {
  char hello = 'h';
  ASSERT_EQ(waitAll({post(true, &hello, 1), post(false, &hello, 1)}), slimecclSuccess);  // both ends set up
  std::vector<char> out(300000, 'x'), in(100000);
  void* r = post(false, in.data(), in.size());
  usleep(100 * 1000);  // the advert reaches the sender before its message is posted
  void* s = post(true, out.data(), out.size());
  EXPECT_EQ(waitAll({s}), slimecclInternalError);
  EXPECT_NE(threadError().find("larger than the 100000-byte receive"), std::string::npos) << threadError();
  EXPECT_EQ(waitAll({r}), slimecclInternalError);
  EXPECT_NE(threadError().find("a message of 300000 bytes"), std::string::npos) << threadError();
}

TEST_F(IbModuleTest, MessagesSentBeforeThePeerLeftAreStillReceived) {
  std::vector<char> a(3000, 'a'), b(3000, 'b'), in(3000);
  ASSERT_EQ(waitAll({post(true, a.data(), a.size()), post(true, b.data(), b.size())}), slimecclSuccess);
  net_->closeSend(send_);
  send_ = nullptr;
  usleep(200 * 1000);
  // Receiving the first notices that the peer left; the second, already here, is still served.
  ASSERT_EQ(waitAll({post(false, in.data(), in.size())}), slimecclSuccess) << threadError();
  EXPECT_EQ(in, a);
  ASSERT_EQ(waitAll({post(false, in.data(), in.size())}), slimecclSuccess) << threadError();
  EXPECT_EQ(in, b);
  void* late = nullptr;
  EXPECT_EQ(net_->irecv(recv_, in.data(), in.size(), &late), slimecclRemoteError);
  EXPECT_NE(threadError().find("closed the connection"), std::string::npos) << threadError();
}

// Host buffers standing in for GPU memory: those handed to mark() count as device memory, copies
// are counted, and a dmabuf is a memfd (no verbs device takes that as a dmabuf: the registration
// is refused, as a device without dmabuf support refuses a GPU's).
class StandInDeviceMemory final : public DeviceMemoryAccess {
 public:
  void mark(const std::vector<char>& buffer) { buffers_.push_back({buffer.data(), buffer.size()}); }
  bool isDeviceMemory(const void* data) const override {
    for (const auto& [start, bytes] : buffers_)
      if (data >= start && data < start + bytes) return true;
    return false;
  }
  slimecclResult_t dmabufOf(uintptr_t, size_t, int* fd, uint64_t* offset) const override {
    *fd = memfd_create("dmabuf-stand-in", 0);
    *offset = 0;
    return slimecclSuccess;
  }
  slimecclResult_t copy(void* dst, const void* src, size_t bytes) const override {
    memcpy(dst, src, bytes);
    ++copies;
    return slimecclSuccess;
  }
  mutable int copies = 0;

 private:
  std::vector<std::pair<const char*, size_t>> buffers_;
};

class IbDeviceMemoryTest : public IbModuleTest, public ::testing::WithParamInterface<DeviceMemoryRoute> {
 protected:
  void prepareContext(NetContext* ctx) override {
    ctx->deviceMemory = &memory_;
    ctx->deviceRoute = GetParam();
  }
  StandInDeviceMemory memory_;
};

// Through a peer memory client the device registers the GPU's addresses as it does host memory;
// the stand-in's host memory lets rxe do the same, so the whole path runs.
class IbPeerMemoryTest : public IbDeviceMemoryTest {};

TEST_P(IbPeerMemoryTest, DeviceBuffersMoveWithoutTheCpuTouchingThem) {
  // Inline-sized and eager (copied through the access on both sides), rendezvous (registered).
  const size_t sizes[] = {8, 5000, 300000};
  std::vector<std::vector<char>> out, in;
  std::vector<void*> requests;
  for (size_t k = 0; k < 3; ++k) {
    out.emplace_back(sizes[k], static_cast<char>('p' + k));
    in.emplace_back(sizes[k], 0);
  }
  for (size_t k = 0; k < 3; ++k) {
    memory_.mark(out[k]);
    memory_.mark(in[k]);
    requests.push_back(post(false, in[k].data(), sizes[k]));
  }
  for (size_t k = 0; k < 3; ++k) requests.push_back(post(true, out[k].data(), sizes[k]));
  ASSERT_EQ(waitAll(requests), slimecclSuccess) << threadError();
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(memcmp(in[k].data(), out[k].data(), sizes[k]), 0) << "message " << k;
  EXPECT_EQ(memory_.copies, 4) << "the two small messages should be copied through the access on both sides";
}

INSTANTIATE_TEST_SUITE_P(Route, IbPeerMemoryTest, ::testing::Values(DeviceMemoryRoute::PeerMemory));

// A dmabuf the device does not take: the message fails with the device's refusal (the comm above
// then fails and closes its links, which ends the receive), never a write from elsewhere.
class IbDmabufTest : public IbDeviceMemoryTest {};

TEST_P(IbDmabufTest, ARefusedRegistrationFailsTheMessageWithTheReason) {
  std::vector<char> out(300000, 'd'), in(300000, 0);
  memory_.mark(out);
  void* receive = post(false, in.data(), in.size());
  void* send = post(true, out.data(), out.size());
  // The receive is tested too: its progress sends the advert the sender's registration waits for.
  ASSERT_EQ(waitAll({receive, send}), slimecclSystemError);
  const std::string why = threadError();
  EXPECT_NE(why.find("the device refused 300000 bytes of GPU memory"), std::string::npos) << why;
  EXPECT_NE(why.find("registered by dmabuf"), std::string::npos) << why;
  EXPECT_EQ(in[0], 0) << "nothing may land from a refused registration";
}

INSTANTIATE_TEST_SUITE_P(Route, IbDmabufTest, ::testing::Values(DeviceMemoryRoute::Dmabuf));

TEST_F(IbModuleTest, TheDeviceSaysWhetherItTakesDeviceMemory) {
  const DeviceMemorySupport support = net_->deviceMemorySupport(ctx_[0]);
  ASSERT_FALSE(support.device.empty()) << support.why;
  EXPECT_NE(support.why.find(support.device), std::string::npos) << support.why;
  EXPECT_NE(support.why.find("peer memory client"), std::string::npos) << support.why;
  // soft-RoCE registers no dmabuf: the refusal GPU machines without a capable NIC see too.
  if (support.device.rfind("rxe", 0) == 0) {
    EXPECT_FALSE(support.dmabuf);
    EXPECT_NE(support.why.find(support.device + " refuses dmabuf registrations (ibv_reg_dmabuf_mr: "),
              std::string::npos)
        << support.why;
  }
}

}  // namespace
}  // namespace slimeccl
