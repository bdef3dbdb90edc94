#include "net/ib/setup_gate.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "net/ib/side_channel.h"
#include "src/base/log.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

constexpr int64_t kSetupTimeoutNs = 10LL * 1000 * 1000 * 1000;

}  // namespace

IbSetupGate::IbSetupGate(int listenFd, int rank, const NetAuth* auth, const uint8_t* nonce)
    : listenFd_(listenFd), rank_(rank), auth_(auth) {
  memcpy(nonce_, nonce, sizeof(nonce_));
}

IbSetupGate::~IbSetupGate() {
  for (const Pending& p : pending_) close(p.fd);
  close(listenFd_);
}

bool IbSetupGate::admits(const IbSetup& setup) const {
  if (setup.magic != kIbSetupMagic || taken_.count(setup.connection) != 0) return false;
  return auth_ == nullptr || (setup.kind <= 1 && auth_->holds(claimOf(setup), nonce_, setup.proof));
}

void IbSetupGate::next(int* fd, IbSetup* setup) {
  *fd = -1;
  for (int accepted; (accepted = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;)
    pending_.push_back(Pending{accepted, nowNs(), {}, 0});
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool complete = false;
    const slimecclResult_t rc = sideRead(p.fd, &p.setup, sizeof(p.setup), &p.got, &complete);
    if (rc == slimecclSuccess && !complete && nowNs() - p.acceptedNs < kSetupTimeoutNs) {
      ++i;
      continue;
    }
    const Pending done = p;
    pending_.erase(pending_.begin() + i);
    if (!complete || !admits(done.setup)) {
      SLIMECCL_WARN(kLogNet, rank_, "ib: dropped a side-channel connection that did not introduce and prove itself");
      close(done.fd);
      continue;
    }
    taken_.insert(done.setup.connection);
    *fd = done.fd;
    *setup = done.setup;
    return;
  }
}

}  // namespace slimeccl
