// The listening end of the ib module's side channel, before any verbs object is made: it accepts
// connections, reads each one's setup record within a bound, and hands on only those whose sender
// proves the comm's secret over the listener's nonce, for a connection id not taken before. Others
// are dropped with a warning: a stranger or a replayed record never reaches the verbs device.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "net/ib/ib_wire.h"
#include "net/net.h"

namespace slimeccl {

class IbSetupGate {
 public:
  // Takes ownership of the non-blocking listening socket. auth == nullptr: senders prove nothing
  // (module tests).
  IbSetupGate(int listenFd, int rank, const NetAuth* auth, const uint8_t* nonce);
  ~IbSetupGate();
  IbSetupGate(const IbSetupGate&) = delete;
  IbSetupGate& operator=(const IbSetupGate&) = delete;

  // A sender that proved itself: its side-channel fd (now the caller's) and its setup record;
  // *fd == -1 when none is ready yet.
  void next(int* fd, IbSetup* setup);

 private:
  struct Pending {
    int fd;
    int64_t acceptedNs;
    IbSetup setup;
    size_t got;
  };
  bool admits(const IbSetup& setup) const;

  int listenFd_;
  int rank_;
  const NetAuth* auth_;
  uint8_t nonce_[NetAuth::kNonceBytes];
  std::vector<Pending> pending_;
  std::unordered_set<uint64_t> taken_;  // connection ids already handed on
};

}  // namespace slimeccl
