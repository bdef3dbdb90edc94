#include "cross_rank_signal.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rank_check.h"

namespace slimeccl_test {

CrossRankSignal::CrossRankSignal() {
  int fds[2];
  if (pipe(fds) != 0) throw RankFailure(concat("pipe: ", std::strerror(errno)));
  readFd_ = fds[0];
  writeFd_ = fds[1];
}

CrossRankSignal::~CrossRankSignal() {
  close(readFd_);
  close(writeFd_);
}

void CrossRankSignal::notify() const {
  const char byte = 1;
  ssize_t written;
  do {
    written = write(writeFd_, &byte, 1);
  } while (written < 0 && errno == EINTR);
  RANK_CHECK(written == 1, "writing to the signal pipe: ", std::strerror(errno));
}

bool CrossRankSignal::wait(int count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd readable{readFd_, POLLIN, 0};
    int ready = poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    RANK_CHECK(ready >= 0, "poll on the signal pipe: ", std::strerror(errno));
    if (ready == 0) return false;
    char byte;
    ssize_t got = read(readFd_, &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    RANK_CHECK(got == 1, "reading the signal pipe: ", got < 0 ? std::strerror(errno) : "end of file");
    --count;
  }
  return true;
}

}  // namespace slimeccl_test
