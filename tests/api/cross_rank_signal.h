// A pipe made before the ranks start, so ranks that are threads or forked children alike can
// tell each other "done" without going through the library under test.
#pragma once

#include <chrono>

namespace slimeccl_test {

class CrossRankSignal {
 public:
  CrossRankSignal();
  ~CrossRankSignal();
  CrossRankSignal(const CrossRankSignal&) = delete;
  CrossRankSignal& operator=(const CrossRankSignal&) = delete;

  void notify() const;
  // True once `count` notifications arrived, false if the timeout passed first.
  bool wait(int count, std::chrono::milliseconds timeout) const;

 private:
  int readFd_ = -1;
  int writeFd_ = -1;
};

}  // namespace slimeccl_test
