#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "src/exec/idle.h"
#include "src/base/sys/cpu_mask.h"

namespace slimeccl {
namespace {

CpuMask cpus(std::initializer_list<int> list) {
  CpuMask mask{};
  for (int cpu : list) mask.words[cpu / 64] |= uint64_t{1} << (cpu % 64);
  return mask;
}

TEST(IdlePolicy, RanksThatShareCoresYieldAtOnce) {
  int spin = -1, yield = -1;
  chooseIdlePolicy(true, &spin, &yield);
  EXPECT_EQ(spin, 0);
  EXPECT_GT(yield, 1000);
}

TEST(IdlePolicy, RanksWithACoreEachSpinFirst) {
  int spin = -1, yield = -1;
  chooseIdlePolicy(false, &spin, &yield);
  EXPECT_GT(spin, 0);
  EXPECT_GT(yield, 1000);
}

TEST(IdlePolicy, ValuesFromTheEnvironmentAreKept) {
  int spin = 7, yield = 3;
  chooseIdlePolicy(true, &spin, &yield);
  EXPECT_EQ(spin, 7);
  EXPECT_EQ(yield, 3);
}

// Spinning polls the requests each round (a system call per socket), so a spin count alone
// could hold a shared core far longer than "briefly"; the spin also ends on a time bound.
int roundsBeforeBlocking(IdleWaiter& idle) {
  int rounds = 0;
  const std::vector<WaitHint> noHints;
  const std::vector<Bell*> noBells;
  while (!idle.nextWaitBlocks()) {
    idle.wait(noHints, noBells, [] { return true; });
    ++rounds;
  }
  return rounds;
}

TEST(IdleWaiter, ASpinEndsOnItsTimeBoundLongBeforeItsCount) {
  constexpr int kHugeSpin = 200000000;  // minutes of pauses, were the count the only bound
  IdleWaiter idle(kHugeSpin, 0);
  EXPECT_LT(roundsBeforeBlocking(idle), kHugeSpin / 2);
  idle.progressed();
  EXPECT_FALSE(idle.nextWaitBlocks());
  // After progress the spin starts afresh, with a clock of its own.
  EXPECT_LT(roundsBeforeBlocking(idle), kHugeSpin / 2);
}

TEST(IdleWaiter, TheYieldsEndOnTheirTimeBoundLongBeforeTheirCount) {
  constexpr int kHugeYield = 200000000;  // a minute or more of system calls, were the count the only bound
  IdleWaiter idle(0, kHugeYield);
  EXPECT_LT(roundsBeforeBlocking(idle), kHugeYield / 2);
  idle.progressed();
  EXPECT_FALSE(idle.nextWaitBlocks());
  EXPECT_LT(roundsBeforeBlocking(idle), kHugeYield / 2);
}

TEST(IdleWaiter, AShortSpinCountStillBlocksAfterSpinAndYields) {
  IdleWaiter idle(3, 2);
  EXPECT_EQ(roundsBeforeBlocking(idle), 5);
}

TEST(CpuMask, RanksBoundToACoreEachDoNotShare) {
  std::vector<CpuMask> host = {cpus({0}), cpus({1})};
  EXPECT_FALSE(ranksOutnumberCores(host[0], host));
  EXPECT_FALSE(ranksOutnumberCores(host[1], host));
}

TEST(CpuMask, UnboundRanksShareWhenMoreThanCores) {
  std::vector<CpuMask> host(3, cpus({0, 1}));
  EXPECT_TRUE(ranksOutnumberCores(host[0], host));
  host.pop_back();
  EXPECT_FALSE(ranksOutnumberCores(host[0], host));
}

TEST(CpuMask, TwoRanksOnOneCoreShareWhileOthersDoNot) {
  std::vector<CpuMask> host = {cpus({0}), cpus({0}), cpus({1}), cpus({2, 3})};
  EXPECT_TRUE(ranksOutnumberCores(host[0], host));
  EXPECT_FALSE(ranksOutnumberCores(host[2], host));
  EXPECT_FALSE(ranksOutnumberCores(host[3], host));
}

TEST(CpuMask, ThisThreadRunsSomewhere) {
  CpuMask mine = CpuMask::ofThisThread();
  EXPECT_GT(mine.count(), 0);
  EXPECT_TRUE(mine.overlaps(mine));
}

}  // namespace
}  // namespace slimeccl
