// Misuse of AllGatherOverlap and AllGatherGemm: a result code and a sentence naming the op and
// the cause, never a crash or a hang.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk_log.h"
#include "entry_points.h"
#include "harness.h"
#include "rank_check.h"
#include "single_rank_comm.h"

namespace slimeccl_test {
namespace {

using OverlapMisuse = SingleRankComm;

#ifdef SLIMECCL_TEST_WITH_BLAS
constexpr bool kWithBlas = true;
#else
constexpr bool kWithBlas = false;
#endif

void expectSentence(const std::string& needle) {
  const std::string text = lastErrorText(nullptr);
  EXPECT_NE(std::string::npos, text.find(needle)) << "slimecclGetLastError(NULL) is \"" << text << "\"";
}

TEST_F(OverlapMisuse, NullCallbackIsInvalidArgument) {
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherOverlap(buffers.send, buffers.recv, 4, slimecclFloat32, nullptr, nullptr, comm_, nullptr));
  expectSentence("AllGatherOverlap: onChunk is NULL");
}

TEST_F(OverlapMisuse, GemmOfATypeWithoutHostGemmIsInvalidArgumentNamingIt) {
  CallBuffers buffers;
  const std::pair<slimecclDataType_t, const char*> types[] = {
      {slimecclInt8, "int8"},   {slimecclUint8, "uint8"},   {slimecclInt32, "int32"},  {slimecclUint32, "uint32"},
      {slimecclInt64, "int64"}, {slimecclUint64, "uint64"}, {slimecclFloat16, "half"}, {slimecclBfloat16, "bfloat16"}};
  for (const auto& [datatype, name] : types) {
    EXPECT_EQ(slimecclInvalidArgument,
              slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, buffers.recv, 4, 4, 4, datatype, comm_, nullptr))
        << name;
    expectSentence(std::string("datatype ") + name + " has no host GEMM");
  }
}

TEST_F(OverlapMisuse, GemmWithAMissingMatrixIsInvalidArgument) {
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherGemm(nullptr, nullptr, buffers.b, buffers.recv, 4, 4, 4, slimecclFloat32, comm_, nullptr));
  expectSentence("aLocal is NULL");
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, nullptr, nullptr, buffers.recv, 4, 4, 4,
                                                           slimecclFloat32, comm_, nullptr));
  expectSentence("b is NULL");
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, nullptr, 4, 4, 4, slimecclFloat32, comm_, nullptr));
  expectSentence("c is NULL");
}

TEST_F(OverlapMisuse, GemmWritingCOverItsInputsIsInvalidArgument) {
  if (!kWithBlas) GTEST_SKIP() << "built without BLAS: every valid-looking call is refused (GemmWithoutBlas)";
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, buffers.b + 32, 4, 4, 4,
                                                           slimecclFloat32, comm_, nullptr));
  expectSentence("c overlaps b");
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, buffers.recv, buffers.b, buffers.recv + 16, 4,
                                                           4, 4, slimecclFloat32, comm_, nullptr));
  expectSentence("c overlaps aGathered");
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, buffers.b + 16, buffers.b, buffers.recv, 4, 4,
                                                           4, slimecclFloat32, comm_, nullptr));
  expectSentence("aGathered overlaps b");
}

// The op waits for its callbacks, so a callback that destroyed (or finalized, or aborted) the comm
// would wait for itself: it is refused, and the op completes.
struct TeardownFromCallback {
  slimecclComm_t comm;
  std::vector<slimecclResult_t> results;
  std::vector<std::string> sentences;
};

void tearDownFromCallback(int, void*, size_t, void* user) {
  auto* seen = static_cast<TeardownFromCallback*>(user);
  for (auto call : {slimecclCommDestroy, slimecclCommFinalize, slimecclCommAbort}) {
    seen->results.push_back(call(seen->comm));
    seen->sentences.push_back(slimecclGetLastError(nullptr));
  }
}

TEST_F(OverlapMisuse, TeardownFromACallbackIsInvalidUsage) {
  CallBuffers buffers;
  TeardownFromCallback seen{comm_, {}, {}};
  ASSERT_EQ(slimecclSuccess, slimecclAllGatherOverlap(buffers.send, buffers.recv, 4, slimecclFloat32,
                                                      tearDownFromCallback, &seen, comm_, nullptr))
      << lastErrorText(comm_);
  ASSERT_EQ(3u, seen.results.size());
  for (size_t i = 0; i < seen.results.size(); ++i) {
    EXPECT_EQ(slimecclInvalidUsage, seen.results[i]) << i;
    EXPECT_NE(std::string::npos, seen.sentences[i].find("called from an AllGatherOverlap callback"))
        << seen.sentences[i];
  }
}

TEST_F(OverlapMisuse, GemmTooLargeForBlasIsInvalidArgument) {
  if (!kWithBlas) GTEST_SKIP() << "built without BLAS: every valid-looking call is refused (GemmWithoutBlas)";
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, buffers.recv, 1,
                                                           size_t{1} << 33, 1, slimecclFloat32, comm_, nullptr));
  expectSentence("each must be at most");
}

TEST_F(OverlapMisuse, GemmWithoutBlasIsInvalidUsageSayingSo) {
  if (kWithBlas) GTEST_SKIP() << "built with BLAS";
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidUsage, slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, buffers.recv, 4, 4, 4,
                                                        slimecclFloat32, comm_, nullptr));
  expectSentence("this build has no BLAS");
}

// Ranks that disagree on the count fail on both sides with a sentence; the callbacks of blocks
// that never land are dropped instead of waited for.
TEST(OverlapMismatch, DifferentCountsFailOnEveryRankWithoutHanging) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      Launch::kForkedShm, 2,
      [](int rank, slimecclComm_t comm) {
        const size_t count = rank == 0 ? 4 : 8;
        std::vector<unsigned char> send(count * 4), recv(count * 4 * 2);
        ChunkLog log(2, count, count * 4, 0);
        const slimecclResult_t rc = slimecclAllGatherOverlap(send.data(), recv.data(), count, slimecclFloat32,
                                                             ChunkLog::onChunk, &log, comm, nullptr);
        RANK_CHECK(rc == slimecclInvalidUsage || rc == slimecclRemoteError, "got ", resultName(rc), ": ",
                   lastErrorText(comm));
        RANK_CHECK(lastErrorText(comm).find("AllGather") != std::string::npos, lastErrorText(comm));
      },
      options);
}

}  // namespace
}  // namespace slimeccl_test
