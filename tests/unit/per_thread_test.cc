#include "src/base/util/per_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace slimeccl {
namespace {

std::atomic<int> liveCounters{0};

struct Counter {
  Counter() { ++liveCounters; }
  ~Counter() { --liveCounters; }
  int calls = 0;
};

TEST(PerThread, EachThreadHasItsOwnObjectUntilItExits) {
  ++perThread<Counter>().calls;
  ++perThread<Counter>().calls;
  EXPECT_EQ(perThread<Counter>().calls, 2);
  const Counter* mine = &perThread<Counter>();
  int before = liveCounters.load();
  std::thread other([&] {
    EXPECT_NE(&perThread<Counter>(), mine);
    EXPECT_EQ(++perThread<Counter>().calls, 1);
    EXPECT_EQ(liveCounters.load(), before + 1);
  });
  other.join();
  EXPECT_EQ(liveCounters.load(), before) << "the exiting thread's object was not destroyed";
  EXPECT_EQ(&perThread<Counter>(), mine);
}

}  // namespace
}  // namespace slimeccl
