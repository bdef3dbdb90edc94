// The "ib" net module: RDMA verbs (rdma-core) between ranks, one IbSender/IbReceiver pair of
// endpoints per connection, set up over a TCP side channel whose address travels in the handle.
#include <cstring>

#include "net/ib/ib_device.h"
#include "net/ib/ib_device_memory.h"
#include "net/ib/ib_receiver.h"
#include "net/ib/ib_sender.h"
#include "net/ib/setup_gate.h"
#include "net/ib/side_channel.h"
#include "net/net.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

struct IbListener {
  int rank;
  IbDevice* dev;
  IbSetupGate gate;
  const DeviceMemoryAccess* deviceMemory;
  DeviceMemoryRoute deviceRoute;
};

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
    *listenComm =
        new IbListener{ctx.rank, dev, IbSetupGate(fd, ctx.rank, ctx.auth, h.nonce), ctx.deviceMemory, ctx.deviceRoute};
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
    sender->takeDeviceMemory(ctx.deviceMemory, ctx.deviceRoute);
    *sendComm = sender;
    return slimecclSuccess;
  }

  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    *recvComm = nullptr;
    auto* l = static_cast<IbListener*>(listenComm);
    int fd = -1;
    IbSetup setup;
    l->gate.next(&fd, &setup);
    if (fd < 0) return slimecclSuccess;
    IbReceiver* receiver = nullptr;
    SLIMECCL_CHECK(IbReceiver::accept(l->rank, l->dev, fd, setup, &receiver));  // it closes fd on failure
    receiver->takeDeviceMemory(l->deviceMemory, l->deviceRoute);
    *recvComm = receiver;
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

  DeviceMemorySupport deviceMemorySupport(const NetContext& ctx) override {
    IbDevice* dev = nullptr;
    if (ibDeviceForRank(ctx.rank, placementOf(ctx), &dev) != slimecclSuccess) {
      DeviceMemorySupport none;
      none.why = threadError();
      clearThreadError();
      return none;
    }
    return ibDeviceMemorySupport(*dev);
  }

  WaitHint sendWaitHint(void* sendComm) override { return static_cast<IbSender*>(sendComm)->waitHint(); }
  WaitHint recvWaitHint(void* recvComm) override { return static_cast<IbReceiver*>(recvComm)->waitHint(); }

  void closeSend(void* sendComm) override {
    auto* sender = static_cast<IbSender*>(sendComm);
    sender->flush();
    delete sender;
  }
  void closeRecv(void* recvComm) override { delete static_cast<IbReceiver*>(recvComm); }
  void closeListen(void* listenComm) override { delete static_cast<IbListener*>(listenComm); }
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
