// Calls that can never work as written: sizes beyond the address space, buffers that overlap
// without being in place, communicator teardown that would wait for the caller itself, a blocking
// Send to itself, one communicator's ops split over streams in a group, and an op whose planning
// runs out of memory. Each gets a result code and a sentence, never a crash, a hang or wrong data.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "entry_points.h"
#include "rank_check.h"
#include "single_rank_comm.h"

namespace slimeccl_test {
namespace {

using Misuse = SingleRankComm;

void expectSentence(const std::string& needle, const std::string& call) {
  const std::string text = lastErrorText(nullptr);
  EXPECT_NE(std::string::npos, text.find(needle)) << call << ": slimecclGetLastError(NULL) is \"" << text << "\"";
}

// count * 4 bytes wraps a size_t (or exceeds PTRDIFF_MAX): refused before anything is touched.
TEST_F(Misuse, CountsBeyondTheAddressSpaceAreInvalidArgument) {
  CallBuffers buffers;
  for (size_t count : {SIZE_MAX, SIZE_MAX / 2 + 1, SIZE_MAX / 4 + 2, SIZE_MAX / 8 + 1}) {
    for (const EntryPoint& entry : entryPoints()) {
      // The GEMM ops check their dimensions themselves (overlap tests).
      if (entry.name == "slimecclAllGatherGemm" || entry.name == "slimecclGemmReduceScatter") continue;
      CallArgs args = validCallArgs(comm_, buffers);
      args.count = count;
      expectRejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with count ", count));
      expectSentence("more bytes than a buffer can hold", entry.name);
    }
  }
  std::vector<float> sent(4, 1.5f), received(4, 0.0f);
  ASSERT_EQ(slimecclSuccess,
            slimecclAllReduce(sent.data(), received.data(), 4, slimecclFloat32, slimecclSum, comm_, nullptr))
      << lastErrorText(comm_);
  EXPECT_EQ(sent, received);
}

TEST_F(Misuse, ABufferRunningPastTheEndOfTheAddressSpaceIsInvalidArgument) {
  std::vector<int32_t> recv(4);
  const void* nearEnd = reinterpret_cast<const void*>(UINTPTR_MAX - 64);
  expectRejected(slimecclInvalidArgument,
                 slimecclAllReduce(nearEnd, recv.data(), 1024, slimecclInt32, slimecclSum, comm_, nullptr),
                 "AllReduce from the last 64 bytes of the address space");
  expectSentence("runs past the end of the address space", "AllReduce");
}

// A receive buffer shifted against the send buffer by less than its size: the op would read bytes
// it has already written. Exactly in place stays allowed.
TEST_F(Misuse, PartlyOverlappingBuffersAreInvalidArgumentAndInPlaceWorks) {
  std::vector<int32_t> buffer(64);
  int32_t* base = buffer.data();
  const struct {
    const char* name;
    slimecclResult_t (*call)(int32_t* send, int32_t* recv, slimecclComm_t comm);
  } calls[] = {
      {"AllReduce",
       [](int32_t* s, int32_t* r, slimecclComm_t c) {
         return slimecclAllReduce(s, r, 16, slimecclInt32, slimecclSum, c, nullptr);
       }},
      {"AllGather",
       [](int32_t* s, int32_t* r, slimecclComm_t c) { return slimecclAllGather(s, r, 16, slimecclInt32, c, nullptr); }},
      {"ReduceScatter",
       [](int32_t* s, int32_t* r, slimecclComm_t c) {
         return slimecclReduceScatter(s, r, 16, slimecclInt32, slimecclSum, c, nullptr);
       }},
      {"Broadcast", [](int32_t* s, int32_t* r,
                       slimecclComm_t c) { return slimecclBroadcast(s, r, 16, slimecclInt32, 0, c, nullptr); }},
      {"Reduce", [](int32_t* s, int32_t* r,
                    slimecclComm_t c) { return slimecclReduce(s, r, 16, slimecclInt32, slimecclMax, 0, c, nullptr); }},
      {"AlltoAll",
       [](int32_t* s, int32_t* r, slimecclComm_t c) { return slimecclAlltoAll(s, r, 16, slimecclInt32, c, nullptr); }},
  };
  for (const auto& call : calls) {
    for (int shift : {1, -1, 15, -15}) {
      expectRejected(slimecclInvalidArgument, call.call(base + 32, base + 32 + shift, comm_),
                     concat(call.name, " with recvbuff = sendbuff + ", shift, " elements"));
      expectSentence("overlap but not in place", call.name);
    }
    std::iota(buffer.begin(), buffer.end(), 0);
    std::vector<int32_t> before(buffer);
    ASSERT_EQ(slimecclSuccess, call.call(base + 32, base + 32, comm_))
        << call.name << " in place: " << lastErrorText(comm_);
    EXPECT_EQ(before, buffer) << call.name << " in place on one rank must leave its data as it was";
  }
}

TEST_F(Misuse, DestroyOrFinalizeWithTheCallersGroupStillOpenIsInvalidUsage) {
  std::vector<float> sent(8, 2.0f), received(8, 0.0f);
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  ASSERT_EQ(slimecclSuccess,
            slimecclAllReduce(sent.data(), received.data(), sent.size(), slimecclFloat32, slimecclSum, comm_, nullptr));
  expectRejected(slimecclInvalidUsage, slimecclCommDestroy(comm_), "CommDestroy inside the group");
  expectSentence("call slimecclGroupEnd first", "CommDestroy");
  expectRejected(slimecclInvalidUsage, slimecclCommFinalize(comm_), "CommFinalize inside the group");
  ASSERT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(nullptr);
  EXPECT_EQ(sent, received) << "the grouped op must still run at GroupEnd";
}

TEST_F(Misuse, AbortWithTheCallersGroupStillOpenDropsItsOps) {
  std::vector<float> sent(8, 2.0f), received(8, 0.0f);
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  ASSERT_EQ(slimecclSuccess,
            slimecclAllReduce(sent.data(), received.data(), sent.size(), slimecclFloat32, slimecclSum, comm_, nullptr));
  ASSERT_EQ(slimecclSuccess, slimecclCommAbort(comm_)) << lastErrorText(nullptr);
  comm_ = nullptr;
  EXPECT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(nullptr);
  EXPECT_EQ(std::vector<float>(8, 0.0f), received) << "an aborted comm's grouped op ran";
}

// Outside a group a Send to itself would wait for a Recv that cannot be posted until it returns.
TEST_F(Misuse, SendToItselfOrRecvFromItselfOutsideAGroupIsInvalidUsage) {
  std::vector<uint8_t> sent(100000, 7), received(100000, 0);
  for (size_t bytes : {size_t{8}, sent.size()}) {
    expectRejected(slimecclInvalidUsage, slimecclSend(sent.data(), bytes, slimecclUint8, 0, comm_, nullptr),
                   concat("Send of ", bytes, " bytes to itself"));
    expectSentence("inside one slimecclGroupStart/slimecclGroupEnd", "Send");
    expectRejected(slimecclInvalidUsage, slimecclRecv(received.data(), bytes, slimecclUint8, 0, comm_, nullptr),
                   concat("Recv of ", bytes, " bytes from itself"));
  }
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  ASSERT_EQ(slimecclSuccess, slimecclSend(sent.data(), sent.size(), slimecclUint8, 0, comm_, nullptr));
  ASSERT_EQ(slimecclSuccess, slimecclRecv(received.data(), received.size(), slimecclUint8, 0, comm_, nullptr));
  ASSERT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(comm_);
  EXPECT_EQ(sent, received);
}

// One comm's ops of one group run in one executor run: split over two streams, each part would
// wait for the other's lock.
TEST_F(Misuse, OneCommsOpsOnTwoStreamsInAGroupAreInvalidUsage) {
  slimecclStream_t stream = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclStreamCreate(&stream));
  std::vector<float> sent(8, 3.0f), first(8, 0.0f), second(8, 0.0f);
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  ASSERT_EQ(slimecclSuccess,
            slimecclAllReduce(sent.data(), first.data(), sent.size(), slimecclFloat32, slimecclSum, comm_, stream));
  expectRejected(
      slimecclInvalidUsage,
      slimecclAllReduce(sent.data(), second.data(), sent.size(), slimecclFloat32, slimecclSum, comm_, nullptr),
      "the second AllReduce of the group on the calling thread");
  expectSentence("must use one stream", "AllReduce");
  ASSERT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclStreamSynchronize(stream)) << lastErrorText(comm_);
  EXPECT_EQ(sent, first);
  EXPECT_EQ(std::vector<float>(8, 0.0f), second);
  EXPECT_EQ(slimecclSuccess, slimecclStreamDestroy(stream));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// In-place AlltoAll snapshots its send buffer before overwriting it; a snapshot that cannot be
// allocated fails the op (and the comm, whose sequence is spent) with a sentence, and leaves the
// comm destroyable and the thread's next calls clean.
TEST(OutOfMemory, AnOpWhosePlanningCannotAllocateFailsWithASentence) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers' allocators abort on a 64 TiB request instead of failing it";
  uint8_t byte = 1;
  const size_t huge = size_t{1} << 46;
  for (bool onStream : {false, true}) {
    slimecclUniqueId id{};
    slimecclComm_t comm = nullptr;
    ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id));
    ASSERT_EQ(slimecclSuccess, slimecclCommInitRank(&comm, 1, id, 0)) << lastErrorText(nullptr);
    slimecclStream_t stream = nullptr;
    if (onStream) {
      ASSERT_EQ(slimecclSuccess, slimecclStreamCreate(&stream));
    }
    slimecclResult_t rc = slimecclAlltoAll(&byte, &byte, huge, slimecclUint8, comm, stream);
    if (onStream) rc = slimecclStreamSynchronize(stream);
    EXPECT_EQ(slimecclSystemError, rc) << (onStream ? "on a stream" : "blocking");
    const std::string text = lastErrorText(onStream ? comm : nullptr);
    EXPECT_NE(std::string::npos, text.find("cannot allocate")) << text;
    EXPECT_NE(std::string::npos, text.find("AlltoAll")) << text;
    if (stream != nullptr) {
      EXPECT_EQ(slimecclSuccess, slimecclStreamDestroy(stream));
    }
    EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm)) << lastErrorText(nullptr);
  }
  // The thread's group and scratch state were left clean: a new comm works.
  slimecclUniqueId id{};
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id));
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRank(&comm, 1, id, 0));
  std::vector<int32_t> sent = {1, 2, 3, 4}, received(4, 0);
  ASSERT_EQ(slimecclSuccess, slimecclGroupStart());
  ASSERT_EQ(slimecclSuccess,
            slimecclAllReduce(sent.data(), received.data(), 4, slimecclInt32, slimecclSum, comm, nullptr));
  ASSERT_EQ(slimecclSuccess, slimecclGroupEnd()) << lastErrorText(comm);
  EXPECT_EQ(sent, received);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm));
}

}  // namespace
}  // namespace slimeccl_test
