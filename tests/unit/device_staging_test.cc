// Where an op's device buffers go in host staging: the spans, what is copied in and out of each,
// and in-place buffers sharing one span. Pure layout: the copies themselves run on GPUs
// (tests/cuda).
#include <gtest/gtest.h>

#include "src/device/device_staging.h"

namespace slimeccl {
namespace {

constexpr int kHost = -1;

TEST(StagingSpans, HostMemoryNeedsNone) {
  char send[64], recv[256];
  EXPECT_TRUE(stagingSpans({send, 64}, kHost, {recv, 256}, kHost).empty());
}

TEST(StagingSpans, SeparateDeviceBuffersGetOneSpanEach) {
  char send[64], recv[256];
  const auto spans = stagingSpans({send, 64}, 0, {recv, 256}, 1);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].memory, send);
  EXPECT_EQ(spans[0].device, 0);
  EXPECT_EQ(spans[0].bytes, 64u);
  EXPECT_EQ(spans[0].inBytes, 64u);
  EXPECT_EQ(spans[0].outBytes, 0u) << "the input is never copied back";
  EXPECT_EQ(spans[1].memory, recv);
  EXPECT_EQ(spans[1].device, 1);
  EXPECT_EQ(spans[1].inBytes, 0u) << "the output's old contents are not copied in";
  EXPECT_EQ(spans[1].outBytes, 256u);
}

TEST(StagingSpans, OnlyTheDeviceSideOfAMixedOpIsStaged) {
  char send[64], recv[256];
  auto spans = stagingSpans({send, 64}, kHost, {recv, 256}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, recv);
  EXPECT_EQ(spans[0].outBytes, 256u);
  spans = stagingSpans({send, 64}, 0, {recv, 256}, kHost);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, send);
  EXPECT_EQ(spans[0].inBytes, 64u);
}

// AllGather in place: rank 2's input is its block of the output.
TEST(StagingSpans, InPlaceBuffersShareOneSpan) {
  char recv[4 * 16];
  const auto spans = stagingSpans({recv + 2 * 16, 16}, 0, {recv, 64}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, recv);
  EXPECT_EQ(spans[0].bytes, 64u);
  EXPECT_EQ(spans[0].inOffset, 32u);
  EXPECT_EQ(spans[0].inBytes, 16u);
  EXPECT_EQ(spans[0].outOffset, 0u);
  EXPECT_EQ(spans[0].outBytes, 64u);
}

// ReduceScatter in place: the output lies inside the input.
TEST(StagingSpans, AnOutputInsideTheInputSharesItsSpan) {
  char send[3 * 8];
  const auto spans = stagingSpans({send, 24}, 0, {send + 8, 8}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, send);
  EXPECT_EQ(spans[0].bytes, 24u);
  EXPECT_EQ(spans[0].inOffset, 0u);
  EXPECT_EQ(spans[0].inBytes, 24u);
  EXPECT_EQ(spans[0].outOffset, 8u);
  EXPECT_EQ(spans[0].outBytes, 8u);
}

TEST(StagingSpans, PartlyOverlappingBuffersSpanBoth) {
  char memory[100];
  const auto spans = stagingSpans({memory + 40, 50}, 0, {memory + 10, 40}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, memory + 10);
  EXPECT_EQ(spans[0].bytes, 80u);
  EXPECT_EQ(spans[0].inOffset, 30u);
  EXPECT_EQ(spans[0].outOffset, 0u);
}

// Broadcast off the root reads nothing; Reduce off the root writes nothing.
TEST(StagingSpans, AnEmptyRegionIsNotStaged) {
  char send[64], recv[64];
  auto spans = stagingSpans({send, 0}, 0, {recv, 64}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, recv);
  spans = stagingSpans({send, 64}, 0, {nullptr, 0}, 0);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].memory, send);
}

// Adjacent but disjoint buffers are two spans, not one.
TEST(StagingSpans, TouchingBuffersDoNotShareASpan) {
  char memory[128];
  EXPECT_EQ(stagingSpans({memory, 64}, 0, {memory + 64, 64}, 0).size(), 2u);
}

}  // namespace
}  // namespace slimeccl
