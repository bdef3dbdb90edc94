#include <gtest/gtest.h>
#include <sched.h>

#include "src/exec/idle.h"

namespace slimeccl {
namespace {

int coresOfThisProcess() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(IdlePolicy, RanksThatShareCoresYieldAtOnce) {
  int spin = -1, yield = -1;
  chooseIdlePolicy(coresOfThisProcess() + 1, &spin, &yield);
  EXPECT_EQ(spin, 0);
  EXPECT_GT(yield, 1000);
}

TEST(IdlePolicy, RanksWithACoreEachSpinFirst) {
  int spin = -1, yield = -1;
  chooseIdlePolicy(1, &spin, &yield);
  EXPECT_GT(spin, 0);
  EXPECT_GT(yield, 1000);
}

TEST(IdlePolicy, ValuesFromTheEnvironmentAreKept) {
  int spin = 7, yield = 3;
  chooseIdlePolicy(coresOfThisProcess() * 4, &spin, &yield);
  EXPECT_EQ(spin, 7);
  EXPECT_EQ(yield, 3);
}

}  // namespace
}  // namespace slimeccl
