// A stand-in for the bootstrap root on loopback: for each connection it reads a rank's hello, checks
// that it is well formed, answers with the bytes it was given, and closes.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "src/bootstrap/wire.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl::fuzz {

class FakeRoot {
 public:
  FakeRoot();
  const SockAddr& address() const { return addr_; }
  // The answer to the next connection, and what its hello must say.
  void expect(int nranks, int rank, std::string reply);
  // Waits until that connection was answered and closed; false if it did not come in time.
  bool waitServed(int timeoutMs);

 private:
  void serve();
  void answer(int fd);

  int listenFd_ = -1;
  SockAddr addr_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int nranks_ = 0;
  int rank_ = 0;
  std::string reply_;
  bool served_ = true;
  std::thread thread_;
};

}  // namespace slimeccl::fuzz
