// How staged ops are cut into chunks: the chunks cover every element once, in order; each chunk's
// rows cover exactly its share of the bytes the op reads and writes on this rank, and no chunk's
// buffers hold more than the chunk size (at least one element per block).
#include "src/exec/op_chunks.h"

#include <gtest/gtest.h>

#include <vector>

#include "src/comm.h"

namespace slimeccl {
namespace {

constexpr int kRanks = 3, kRank = 1;

class OpChunks : public ::testing::Test {
 protected:
  OpChunks() {
    comm_.rank = kRank;
    comm_.nranks = kRanks;
  }
  OpRecord op(Coll coll, size_t count, int root = 0) {
    send_.assign(count * 4 * kRanks, 0);
    recv_.assign(count * 4 * kRanks, 0);
    return OpRecord{coll, &comm_, send_.data(), recv_.data(), count, slimecclFloat, slimecclSum, root, 0, 0, nullptr};
  }

  // How often each byte of `buffer` lies in some chunk's rows.
  static std::vector<int> coverage(const OpRecord& o, const std::vector<OpChunk>& chunks, size_t bufferBytes,
                                   ChunkRows (*rowsOf)(const OpRecord&, const OpChunk&)) {
    std::vector<int> hits(bufferBytes, 0);
    for (const OpChunk& chunk : chunks) {
      const ChunkRows rows = rowsOf(o, chunk);
      for (size_t r = 0; r < rows.rows; ++r)
        for (size_t b = 0; b < rows.width; ++b) ++hits.at(rows.offset + r * rows.pitch + b);
    }
    return hits;
  }

  // Each byte of the region once, nothing outside it.
  static void expectCoversOnce(const std::vector<int>& hits, const char* base, Region region, const char* what) {
    for (size_t b = 0; b < hits.size(); ++b) {
      const char* at = base + b;
      const bool inside = region.bytes != 0 && at >= region.data && at < region.data + region.bytes;
      ASSERT_EQ(hits[b], inside ? 1 : 0) << what << " byte " << b;
    }
  }

  slimecclComm comm_;
  std::vector<char> send_, recv_;
};

TEST_F(OpChunks, ChunksCoverEveryElementAndEveryByteOnce) {
  const Coll colls[] = {Coll::Send,          Coll::Recv,      Coll::AllGather, Coll::AllReduce,
                        Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce,    Coll::AlltoAll};
  for (Coll coll : colls) {
    for (int root : {0, kRank}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{100}, size_t{1031}}) {
        for (size_t chunkBytes : {size_t{4}, size_t{40}, size_t{1000}, size_t{1} << 20}) {
          SCOPED_TRACE(testing::Message()
                       << collName(coll) << " root " << root << " count " << count << " chunk " << chunkBytes);
          const OpRecord o = op(coll, count, root);
          const std::vector<OpChunk> chunks = chunksOf(o, chunkBytes);
          size_t next = 0;
          for (const OpChunk& c : chunks) {
            ASSERT_EQ(c.first, next);
            ASSERT_GT(c.count, 0u);
            next += c.count;
            EXPECT_TRUE(sendRows(o, c).bytes() <= chunkBytes || c.count == 1);
            EXPECT_TRUE(recvRows(o, c).bytes() <= chunkBytes || c.count == 1);
          }
          ASSERT_EQ(next, count);
          EXPECT_EQ(chunkCount(o, chunkBytes), chunks.size());
          size_t largest = 0;
          ASSERT_TRUE(largestBufferBytes(o, &largest));
          if (largest <= chunkBytes) {
            EXPECT_EQ(chunks.size(), 1u);
          }
          expectCoversOnce(coverage(o, chunks, send_.size(), sendRows), send_.data(), readRegion(o), "send");
          expectCoversOnce(coverage(o, chunks, recv_.size(), recvRows), recv_.data(), writtenRegion(o), "recv");
        }
      }
    }
  }
}

TEST_F(OpChunks, RowsOfABlockPerRankAreOneBlockApart) {
  const OpRecord o = op(Coll::AlltoAll, 1000);
  const std::vector<OpChunk> chunks = chunksOf(o, 1200);  // 100 floats per block and chunk
  ASSERT_EQ(chunks.size(), 10u);
  const ChunkRows rows = recvRows(o, chunks[3]);
  EXPECT_EQ(rows.offset, 300u * 4);
  EXPECT_EQ(rows.pitch, 1000u * 4);
  EXPECT_EQ(rows.width, 100u * 4);
  EXPECT_EQ(rows.rows, static_cast<size_t>(kRanks));
}

}  // namespace
}  // namespace slimeccl
