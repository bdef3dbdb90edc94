// Buffers from slimecclMemAlloc: its argument checks, and collectives and Send/Recv whose buffers
// come from it, right on every net (over shm, peers map the sender's buffer and copy with memcpy),
// at sizes on both sides of the thresholds where shm messages change path, in and out of place.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

TEST(MemAlloc, GivesPageAlignedWritableMemoryAndFreesIt) {
  void* ptr = nullptr;
  ASSERT_EQ(slimecclMemAlloc(&ptr, 3 * 4096 + 5), slimecclSuccess);
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 4096, 0u);
  memset(ptr, 0x5a, 3 * 4096 + 5);
  EXPECT_EQ(static_cast<unsigned char*>(ptr)[3 * 4096 + 4], 0x5a);
  EXPECT_EQ(slimecclMemFree(ptr), slimecclSuccess);
}

TEST(MemAlloc, SizeZeroGivesNullAndFreeingNullSucceeds) {
  void* ptr = &ptr;
  EXPECT_EQ(slimecclMemAlloc(&ptr, 0), slimecclSuccess);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(slimecclMemFree(nullptr), slimecclSuccess);
}

TEST(MemAlloc, BadArgumentsAreInvalidArgumentWithASentence) {
  EXPECT_EQ(slimecclMemAlloc(nullptr, 64), slimecclInvalidArgument);
  EXPECT_NE(std::string(slimecclGetLastError(nullptr)).find("ptr is NULL"), std::string::npos);

  int onTheStack = 0;
  EXPECT_EQ(slimecclMemFree(&onTheStack), slimecclInvalidArgument);
  EXPECT_NE(std::string(slimecclGetLastError(nullptr)).find("not a live buffer of slimecclMemAlloc"),
            std::string::npos);

  void* ptr = nullptr;
  ASSERT_EQ(slimecclMemAlloc(&ptr, 100), slimecclSuccess);
  EXPECT_EQ(slimecclMemFree(static_cast<char*>(ptr) + 8), slimecclInvalidArgument);  // not its start
  EXPECT_EQ(slimecclMemFree(ptr), slimecclSuccess);
  EXPECT_EQ(slimecclMemFree(ptr), slimecclInvalidArgument);  // freed twice
}

TEST(MemAlloc, TooLargeASizeIsASystemErrorWithASentence) {
  void* ptr = nullptr;
  EXPECT_EQ(slimecclMemAlloc(&ptr, SIZE_MAX - 16), slimecclSystemError);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_NE(std::string(slimecclGetLastError(nullptr)).find("cannot allocate"), std::string::npos);
}

// A rank's buffer from slimecclMemAlloc, freed when the rank is done with it.
class SharedInts {
 public:
  explicit SharedInts(size_t count) : count_(count) {
    RANK_CHECK_SUCCESS(slimecclMemAlloc(reinterpret_cast<void**>(&data_), count * sizeof(int32_t)), nullptr);
  }
  ~SharedInts() { slimecclMemFree(data_); }
  SharedInts(const SharedInts&) = delete;
  SharedInts& operator=(const SharedInts&) = delete;
  int32_t* data() const { return data_; }
  int32_t& operator[](size_t i) const { return data_[i]; }
  size_t count() const { return count_; }

 private:
  int32_t* data_ = nullptr;
  size_t count_;
};

int32_t valueOf(int rank, size_t i, int round) { return static_cast<int32_t>(rank * 7919 + i * 31 + round); }

// Element counts around the shm paths: slots, FIFO, shared pull (16 KiB), kernel pull (64 KiB).
const size_t kCounts[] = {1, 250, 4100, 16411, 262147};

class SharedBuffers : public ::testing::TestWithParam<Launch> {};

TEST_P(SharedBuffers, AllGatherInAndOutOfPlace) {
  runRanks(GetParam(), 3, [](int rank, slimecclComm_t comm) {
    const int nranks = 3;
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        SharedInts send(count), recv(count * nranks);
        int32_t* mine = inPlace ? recv.data() + rank * count : send.data();
        for (size_t i = 0; i < count; ++i) mine[i] = valueOf(rank, i, inPlace);
        RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data(), count, slimecclInt32, comm, nullptr), comm);
        for (int r = 0; r < nranks; ++r)
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(recv[r * count + i] == valueOf(r, i, inPlace), "count ", count, " in place ", inPlace, " block ",
                       r, " element ", i);
      }
    }
  });
}

TEST_P(SharedBuffers, SendRecvRingReusingOneBufferOverRounds) {
  runRanks(GetParam(), 4, [](int rank, slimecclComm_t comm) {
    const int nranks = 4, next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (size_t count : kCounts) {
      SharedInts out(count), in(count);
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < count; ++i) out[i] = valueOf(rank, i, round);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        RANK_CHECK_SUCCESS(slimecclSend(out.data(), count, slimecclInt32, next, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(in.data(), count, slimecclInt32, prev, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(in[i] == valueOf(prev, i, round), "count ", count, " round ", round, " element ", i);
      }
    }
  });
}

TEST_P(SharedBuffers, AllReduceAndAlltoAll) {
  runRanks(GetParam(), 3, [](int rank, slimecclComm_t comm) {
    const int nranks = 3;
    for (size_t count : kCounts) {
      SharedInts send(count * nranks), recv(count * nranks);
      for (size_t i = 0; i < count * nranks; ++i) send[i] = valueOf(rank, i, 0);
      RANK_CHECK_SUCCESS(slimecclAllReduce(send.data(), recv.data(), count, slimecclInt32, slimecclSum, comm, nullptr),
                         comm);
      for (size_t i = 0; i < count; ++i) {
        const int32_t expected = valueOf(0, i, 0) + valueOf(1, i, 0) + valueOf(2, i, 0);
        RANK_CHECK(recv[i] == expected, "AllReduce count ", count, " element ", i);
      }
      RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), count, slimecclInt32, comm, nullptr), comm);
      for (int from = 0; from < nranks; ++from)
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(recv[from * count + i] == valueOf(from, rank * count + i, 0), "AlltoAll count ", count, " from ",
                     from, " element ", i);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, SharedBuffers,
                         ::testing::Values(Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads),
                         [](const auto& info) { return std::string(launchName(info.param)); });

}  // namespace
}  // namespace slimeccl_test
