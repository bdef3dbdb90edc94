// A link: the four net connections between this rank and one peer (data and control, each way),
// made lazily on first use, and the in-order queues of net operations that run on them.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "net/net.h"
#include "src/link/net_op.h"

namespace slimeccl {

// One direction of one purpose: operations are posted and complete strictly in queue order, so
// both sides agree on which message is which without tags.
struct Lane {
  void* conn = nullptr;
  bool sending = false;
  std::deque<NetOp*> waiting;   // not posted yet
  std::deque<NetOp*> inflight;  // posted, oldest first
  bool idle() const { return waiting.empty() && inflight.empty(); }
};

struct Link {
  int peer = -1;
  int peerClass = 0;  // the peer's class: which of the comm's net modules serves it
  NetModule* net = nullptr;
  Lane dataOut, ctrlOut, dataIn, ctrlIn;
  bool connected() const { return dataOut.conn && ctrlOut.conn && dataIn.conn && ctrlIn.conn; }
};

// First message on every connection: who is connecting, for which purpose, and a proof of the
// comm secret over the acceptor's connection nonce (connectionProof).
struct ConnectHello {
  uint32_t magic;
  int32_t rank;
  uint32_t kind;  // ConnKind
  uint32_t reserved;
  uint8_t proof[32];
};
constexpr uint32_t kConnectHelloMagic = 0x534c4348;  // "SLCH"

}  // namespace slimeccl
