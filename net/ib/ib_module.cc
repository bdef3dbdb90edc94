// The "ib" net module: RDMA verbs (rdma-core) between ranks, one IbSender/IbReceiver pair of
// endpoints per connection, set up over a TCP side channel whose address travels in the handle.
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "net/ib/ib_device.h"
#include "net/ib/ib_receiver.h"
#include "net/ib/ib_sender.h"
#include "net/ib/side_channel.h"
#include "net/net.h"
#include "src/error.h"
#include "src/log.h"
#include "src/sys/time.h"

namespace slimeccl {
namespace {

constexpr int64_t kSetupTimeoutNs = 10LL * 1000 * 1000 * 1000;

// A side-channel connection whose sender has not finished sending its setup record.
struct PendingSide {
  int fd;
  int64_t acceptedNs;
  IbSetup setup;
  size_t got;
};

struct IbListener {
  int fd;
  int rank;
  IbDevice* dev;
  const NetAuth* auth;  // nullptr: senders prove nothing (module tests)
  uint8_t nonce[NetAuth::kNonceBytes];
  std::vector<PendingSide> pending;
};

// Whether the sender's setup proves it holds the comm's secret over the listener's nonce.
bool provesItself(const IbListener& l, const IbSetup& setup) {
  return l.auth == nullptr || (setup.kind <= 1 && l.auth->holds(setup.rank, setup.kind, l.nonce, setup.proof));
}

class IbModule final : public NetModule {
 public:
  const char* name() const override { return "ib"; }

  slimecclResult_t listen(const NetContext& ctx, void* handle, void** listenComm) override {
    IbDevice* dev = nullptr;
    SLIMECCL_CHECK(ibDeviceForRank(ctx.rank, placementOf(ctx), &dev));
    IbHandle h{};
    h.magic = kIbHandleMagic;
    h.rank = ctx.rank;
    int fd = -1;
    SLIMECCL_CHECK(sideListen(&h.sideAddr, &fd));
    if (ctx.auth != nullptr) memcpy(h.nonce, ctx.auth->listenNonce(), sizeof(h.nonce));
    memcpy(handle, &h, sizeof(h));
    auto* l = new IbListener{fd, ctx.rank, dev, ctx.auth, {}, {}};
    memcpy(l->nonce, h.nonce, sizeof(l->nonce));
    *listenComm = l;
    return slimecclSuccess;
  }

  slimecclResult_t connect(const NetContext& ctx, const void* handle, ConnKind kind, void** sendComm) override {
    *sendComm = nullptr;
    IbHandle h;
    memcpy(&h, handle, sizeof(h));
    if (h.magic != kIbHandleMagic || !h.sideAddr.valid())
      return fail(slimecclInternalError, "ib: the peer's connection handle is corrupt");
    IbSender* sender = nullptr;
    SLIMECCL_CHECK(IbSender::connect(ctx, h, kind, &sender));
    *sendComm = sender;
    return slimecclSuccess;
  }

  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    *recvComm = nullptr;
    auto* l = static_cast<IbListener*>(listenComm);
    for (int fd; (fd = accept4(l->fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;)
      l->pending.push_back(PendingSide{fd, nowNs(), {}, 0});
    for (size_t i = 0; i < l->pending.size();) {
      PendingSide& p = l->pending[i];
      bool complete = false;
      slimecclResult_t rc = sideRead(p.fd, &p.setup, sizeof(p.setup), &p.got, &complete);
      if (rc == slimecclSuccess && !complete && nowNs() - p.acceptedNs < kSetupTimeoutNs) {
        ++i;
        continue;
      }
      PendingSide done = p;
      l->pending.erase(l->pending.begin() + i);
      if (!complete || done.setup.magic != kIbSetupMagic || !provesItself(*l, done.setup)) {
        SLIMECCL_WARN(kLogNet, l->rank,
                      "ib: dropped a side-channel connection that did not introduce and prove itself");
        close(done.fd);
        continue;
      }
      IbReceiver* receiver = nullptr;
      rc = IbReceiver::accept(l->rank, l->dev, done.fd, done.setup, &receiver);
      if (rc != slimecclSuccess) return rc;  // the receiver closed the fd
      *recvComm = receiver;
      return slimecclSuccess;
    }
    return slimecclSuccess;
  }

  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    IbRequest* r = nullptr;
    SLIMECCL_CHECK(static_cast<IbSender*>(sendComm)->isend(data, size, &r));
    *request = r;
    return slimecclSuccess;
  }

  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    IbRequest* r = nullptr;
    SLIMECCL_CHECK(static_cast<IbReceiver*>(recvComm)->irecv(data, size, &r));
    *request = r;
    return slimecclSuccess;
  }

  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    auto* r = static_cast<IbRequest*>(request);
    return r->owner->test(r, done, size);
  }

  WaitHint sendWaitHint(void* sendComm) override { return static_cast<IbSender*>(sendComm)->waitHint(); }
  WaitHint recvWaitHint(void* recvComm) override { return static_cast<IbReceiver*>(recvComm)->waitHint(); }

  void closeSend(void* sendComm) override {
    auto* sender = static_cast<IbSender*>(sendComm);
    sender->flush();
    delete sender;
  }
  void closeRecv(void* recvComm) override { delete static_cast<IbReceiver*>(recvComm); }
  void closeListen(void* listenComm) override {
    auto* l = static_cast<IbListener*>(listenComm);
    for (const PendingSide& p : l->pending) close(p.fd);
    close(l->fd);
    delete l;
  }
};

}  // namespace

NetModule* ibNetModule() {
  std::string whyNone;
  if (ibUsablePorts(&whyNone).empty()) {
    fail(slimecclSystemError, "ib: {}", whyNone);
    return nullptr;
  }
  static IbModule module;
  return &module;
}

}  // namespace slimeccl
