// The out-of-band ring: every rank holds a socket to its next and from its previous rank. It
// serves allgather and barrier for init, split and connection setup, never the data path.
#pragma once

#include <atomic>
#include <vector>

#include "include/slimeccl.h"
#include "src/bootstrap/auth.h"
#include "src/bootstrap/unique_id.h"
#include "src/base/sys/time.h"

namespace slimeccl {

class BootstrapRing {
 public:
  BootstrapRing() = default;
  ~BootstrapRing();
  BootstrapRing(const BootstrapRing&) = delete;
  BootstrapRing& operator=(const BootstrapRing&) = delete;

  // Opens the listener a rank publishes before the ring is formed, on the interface the socket
  // module uses (listenInterface in topo/system_topology.h).
  slimecclResult_t listen(SockAddr* addr);
  // Connects to the next rank and accepts the previous one, which must prove the secret.
  slimecclResult_t form(const std::vector<SockAddr>& addrs, int rank, const CommSecret& secret,
                        const Deadline& deadline, const std::atomic<bool>* abortFlag);
  // data holds nranks slots of bytesPerRank; this rank's slot is filled, the others are filled in.
  slimecclResult_t allgather(void* data, size_t bytesPerRank, const Deadline& deadline,
                             const std::atomic<bool>* abortFlag);
  slimecclResult_t barrier(const Deadline& deadline, const std::atomic<bool>* abortFlag);
  void close();

 private:
  // Accepts the next connection to the listener and sends it a fresh challenge.
  slimecclResult_t acceptCandidate(int rank, int prev, const Deadline& deadline, const std::atomic<bool>* abortFlag,
                                   int* fd, Nonce* challenge);
  // Reads the next rank's challenge and answers it with this rank's hello.
  slimecclResult_t answerChallenge(int rank, int next, const CommSecret& secret, const Deadline& deadline,
                                   const std::atomic<bool>* abortFlag);

  int rank_ = 0;
  int nranks_ = 1;
  int listenFd_ = -1;
  int nextFd_ = -1;
  int prevFd_ = -1;
};

}  // namespace slimeccl
