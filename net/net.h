// The internal net-module interface. It mirrors the plugin ABI of include/slimeccl_net.h (listen,
// connect, accept, isend/irecv/test, close) and adds what built-in modules can do better: a local
// context (the rank's doorbell), a hint on what to block on while a request waits, and a small
// message moved at once without a request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "include/slimeccl_net.h"
#include "net/bell.h"
#include "topo/interfaces.h"

namespace slimeccl {

// Where a rank's connections belong on this machine, as the layer above the modules decides it
// (from the machine's topology, src/link/system_net_placement.h; tests hand their own).
// Modules ask this, never the topology.
class NetPlacement {
 public:
  virtual ~NetPlacement() = default;
  // The NUMA node whose memory should receive this rank's incoming data; -1: no preference.
  virtual int homeNumaNode() const = 0;
  // The interface a socket listener of `rank` listens on.
  virtual slimecclResult_t listenInterface(int rank, NetInterface* out) const = 0;
  // The device (name, or name:port) of the module `moduleName` that serves `rank`; "" where none
  // is placed.
  virtual std::string placedDevice(int rank, const char* moduleName) const = 0;
};

// Who claims a stream of a connection: the connecting rank, the connection's kind, the random id
// the connecting side drew for the connection, and the stream's place in it.
struct NetClaim {
  int rank;
  uint32_t kind;
  uint64_t connection;
  uint64_t part;
};

// Proof that a connection's far end holds the comm's secret, for modules that read an
// introduction of their own before the executor's hello (the socket module's streams, the ib
// module's side channel): the listener publishes a nonce in its handle; a connecting rank answers
// it with a proof of its whole claim (src/link/secret_net_auth.h). A listener takes each
// connection id once, so a proof read off the wire opens nothing again. Nonces and proofs are 32
// bytes.
class NetAuth {
 public:
  static constexpr size_t kNonceBytes = 32;
  static constexpr size_t kProofBytes = 32;
  virtual ~NetAuth() = default;
  // The nonce this rank's listeners publish.
  virtual const uint8_t* listenNonce() const = 0;
  virtual void prove(const NetClaim& claim, const uint8_t* nonce, uint8_t* proof) const = 0;
  // Whether `proof` is the one made for `claim` over `nonce` (constant time).
  virtual bool holds(const NetClaim& claim, const uint8_t* nonce, const uint8_t* proof) const = 0;
};

// How a module that reaches device memory (GPUDirect RDMA) registers it with its device: a dmabuf
// the GPU driver exports for the range, or the device's address itself where the kernel's peer
// memory client (nvidia-peermem) resolves it.
enum class DeviceMemoryRoute { None, Dmabuf, PeerMemory };

const char* deviceMemoryRouteName(DeviceMemoryRoute route);

// GPU memory as a module that reaches it sees it, provided by the layer above: the modules know no
// GPU API.
class DeviceMemoryAccess {
 public:
  virtual ~DeviceMemoryAccess() = default;
  // Whether `data` is device memory (host code cannot read or write it).
  virtual bool isDeviceMemory(const void* data) const = 0;
  // A dmabuf file descriptor for [start, start + bytes) (page-aligned), which the caller closes,
  // and the offset of `start` in it; a sentence when the GPU gives none.
  virtual slimecclResult_t dmabufOf(uintptr_t start, size_t bytes, int* fd, uint64_t* offset) const = 0;
  // Copies between device and host memory (either way) and returns once the bytes have landed.
  virtual slimecclResult_t copy(void* dst, const void* src, size_t bytes) const = 0;
};

// Whether a module's device can take device memory: by dmabuf, through a peer memory client, or
// neither (then `why` says so).
struct DeviceMemorySupport {
  std::string device;  // the device that serves the rank, "" where none
  bool dmabuf = false;
  bool peerMemory = false;
  std::string why;  // what was found: a sentence either way
};

// What the owner of a connection is: its doorbell and its identity, for logs and errors.
struct NetContext {
  Bell* bell = nullptr;
  int rank = -1;
  // The comm's ranks on this host (0: not known yet), and whether they outnumber the cores they
  // may run on, so that a peer may not run at once.
  int ranksOnHost = 0;
  bool ranksShareCores = false;
  // nullptr: no preference (any NUMA node, the default interface rule, no placed device).
  const NetPlacement* placement = nullptr;
  // nullptr: connections prove nothing (module tests); every comm hands its own.
  const NetAuth* auth = nullptr;
  // Set where the comm chose GPUDirect RDMA for this module: buffers that are device memory are
  // registered by `deviceRoute` and never touched by the CPU (copies go through deviceMemory).
  const DeviceMemoryAccess* deviceMemory = nullptr;
  DeviceMemoryRoute deviceRoute = DeviceMemoryRoute::None;
};

// The context's placement, or the one without preferences.
const NetPlacement& placementOf(const NetContext& ctx);

// How to block until a request may progress: a file descriptor with poll events, or the
// context's doorbell, or nothing (poll with a timer).
struct WaitHint {
  int fd = -1;
  short events = 0;
  bool bell = false;
};

// Connection purpose: small control messages or bulk data (a module may size buffers by it).
enum class ConnKind { Data = 0, Ctrl = 1 };

// What sendNow and recvNow did: moved the message; found none to take yet (recvNow; ask again);
// or left it to a request (isend, irecv), which the module serves as ever.
enum class NowStatus { Done, NotYet, UseRequest };

class NetModule {
 public:
  virtual ~NetModule() = default;
  virtual const char* name() const = 0;
  // Listen on behalf of ctx; handle receives at most SLIMECCL_NET_HANDLE_MAXSIZE bytes.
  virtual slimecclResult_t listen(const NetContext& ctx, void* handle, void** listenComm) = 0;
  // Non-blocking: Success with *sendComm == nullptr means "call again".
  virtual slimecclResult_t connect(const NetContext& ctx, const void* handle, ConnKind kind, void** sendComm) = 0;
  virtual slimecclResult_t accept(void* listenComm, void** recvComm) = 0;
  // Non-blocking: Success with *request == nullptr means "too many in flight, retry".
  virtual slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) = 0;
  virtual slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) = 0;
  // The same, for bytes that land in a buffer larger than the caches: a module that copies them
  // with the CPU may use streaming stores (copyStreaming).
  virtual slimecclResult_t irecvStreaming(void* recvComm, void* data, size_t size, void** request) {
    return irecv(recvComm, data, size, request);
  }
  // Frees the request once it reports done or an error.
  virtual slimecclResult_t test(void* request, bool* done, size_t* size) = 0;
  // A small message at once, without a request, where the connection has none in flight: sent
  // whole, or received whole into `data` (at most `size` bytes; *length: its length). A module
  // that cannot always says UseRequest; one that can says so too for what it cannot take at once
  // (a larger message, one that would not fit `data`), which a request then takes.
  virtual slimecclResult_t sendNow(void* sendComm, const void* data, size_t size, NowStatus* status) {
    *status = NowStatus::UseRequest;
    return slimecclSuccess;
  }
  virtual slimecclResult_t recvNow(void* recvComm, void* data, size_t size, size_t* length, NowStatus* status) {
    *status = NowStatus::UseRequest;
    return slimecclSuccess;
  }
  // Whether the device that would serve ctx's rank can take device memory (GPUDirect RDMA).
  // Modules that move bytes with the CPU cannot.
  virtual DeviceMemorySupport deviceMemorySupport(const NetContext& ctx);
  virtual WaitHint sendWaitHint(void* sendComm) { return {}; }
  virtual WaitHint recvWaitHint(void* recvComm) { return {}; }
  virtual void closeSend(void* sendComm) = 0;
  virtual void closeRecv(void* recvComm) = 0;
  virtual void closeListen(void* listenComm) = 0;
};

// The built-in modules and, when SLIMECCL_NET_PLUGIN=NAME is set, the external one. Modules live
// for the whole process. Returns nullptr (with a thread error) for an unknown or broken module.
NetModule* netModuleByName(const std::string& name);
NetModule* shmNetModule();
NetModule* socketNetModule();
// RDMA verbs; nullptr (with a thread error) when no verbs port is usable.
NetModule* ibNetModule();
// Loads libslimeccl-net-NAME.so and adapts its v1 table; nullptr with a thread error on failure.
NetModule* loadNetPlugin(const std::string& name);

}  // namespace slimeccl
