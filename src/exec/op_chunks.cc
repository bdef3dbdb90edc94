#include "src/exec/op_chunks.h"

#include <algorithm>

#include "src/comm.h"

namespace slimeccl {
namespace {

// How many blocks (one per rank, or one) the op's send and receive buffers hold.
size_t sendBlocks(const OpRecord& op) {
  return op.coll == Coll::ReduceScatter || op.coll == Coll::AlltoAll ? static_cast<size_t>(op.comm->nranks) : 1;
}
size_t recvBlocks(const OpRecord& op) {
  return op.coll == Coll::AllGather || op.coll == Coll::AlltoAll ? static_cast<size_t>(op.comm->nranks) : 1;
}

ChunkRows rowsIn(const OpRecord& op, const OpChunk& chunk, size_t blocks, Region region) {
  if (region.bytes == 0 || chunk.count == 0) return {};
  const size_t element = typeSize(op.type);
  return ChunkRows{chunk.first * element, op.count * element, chunk.count * element, blocks};
}

// Elements of each block in a chunk: as many as let each of its buffers hold at most chunkBytes.
size_t elementsPerChunk(const OpRecord& op, size_t chunkBytes) {
  const size_t blocks = std::max(sendBlocks(op), recvBlocks(op));
  return std::max<size_t>(1, chunkBytes / (typeSize(op.type) * blocks));
}

}  // namespace

size_t chunkCount(const OpRecord& op, size_t chunkBytes) {
  const size_t perChunk = elementsPerChunk(op, chunkBytes);
  return op.count <= perChunk ? 1 : (op.count + perChunk - 1) / perChunk;
}

std::vector<OpChunk> chunksOf(const OpRecord& op, size_t chunkBytes) {
  const size_t perChunk = elementsPerChunk(op, chunkBytes);
  if (op.count <= perChunk) return {OpChunk{0, op.count}};
  std::vector<OpChunk> chunks;
  for (size_t first = 0; first < op.count; first += perChunk)
    chunks.push_back(OpChunk{first, std::min(perChunk, op.count - first)});
  return chunks;
}

ChunkRows sendRows(const OpRecord& op, const OpChunk& chunk) {
  return rowsIn(op, chunk, sendBlocks(op), readRegion(op));
}

ChunkRows recvRows(const OpRecord& op, const OpChunk& chunk) {
  return rowsIn(op, chunk, recvBlocks(op), writtenRegion(op));
}

}  // namespace slimeccl
