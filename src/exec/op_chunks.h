// A large op through host staging runs as rounds of smaller ops of the same kind, one per chunk of
// its elements, so that the device copies of one chunk overlap the transfer of another
// (src/exec/chunked_run.h). Every rank cuts an op alike: the cut depends only on the call (kind,
// count, datatype, ranks), which all ranks of the op share.
#pragma once

#include <cstddef>
#include <vector>

#include "src/op.h"

namespace slimeccl {

// Elements [first, first + count) of every block of the op's buffers (a buffer holds one block,
// or one per rank for AllGather's and AlltoAll's receive buffer and ReduceScatter's and AlltoAll's
// send buffer).
struct OpChunk {
  size_t first = 0;
  size_t count = 0;
};

// Where a chunk lies in one of the op's buffers, in bytes: `rows` stretches of `width` bytes, the
// first at `offset`, each `pitch` after the one before. In the chunk's own (staged) buffer the
// rows lie back to back.
struct ChunkRows {
  size_t offset = 0;
  size_t pitch = 0;
  size_t width = 0;
  size_t rows = 0;  // 0: the op has no such buffer on this rank
  size_t bytes() const { return width * rows; }
};

// The chunks of an op whose largest buffer holds more than chunkBytes: each chunk's buffers hold
// at most chunkBytes (at least one element per block), and together they cover every element
// once. One chunk, the whole op, when it holds no more.
std::vector<OpChunk> chunksOf(const OpRecord& op, size_t chunkBytes);

// How many chunks chunksOf gives, without making them.
size_t chunkCount(const OpRecord& op, size_t chunkBytes);

// The chunk's rows in the op's send buffer (what it reads on this rank) and in its receive buffer
// (what it writes on this rank).
ChunkRows sendRows(const OpRecord& op, const OpChunk& chunk);
ChunkRows recvRows(const OpRecord& op, const OpChunk& chunk);

}  // namespace slimeccl
