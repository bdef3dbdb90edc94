// Broadcast, AlltoAll and AllGather, which only move bytes: their data is a byte pattern per
// (seed, block owner), compared bit for bit whatever the datatype.
#include "allgather_buffers.h"
#include "buffers.h"
#include "collective_checks.h"
#include "harness.h"
#include "rank_check.h"
#include "sealed_buffer.h"

namespace slimeccl_test {

namespace {

void verifyPattern(const uint8_t* data, size_t bytes, uint64_t seed, int patternId, const std::string& what) {
  std::string mismatch = patternMismatch(data, bytes, seed, patternId);
  RANK_CHECK(mismatch.empty(), what, ": ", mismatch);
}

// The pattern of the AlltoAll block that rank `from` sends to rank `to`.
int alltoallBlockId(int from, int to, int nranks) { return from * nranks + to; }

}  // namespace

void checkBroadcast(slimecclComm_t comm, const CallShape& shape) {
  const int rank = commRank(comm);
  const int nranks = commSize(comm);
  const bool root = rank == shape.root;
  const size_t bytes = shape.count * datatypeSize(shape.datatype);
  if (shape.inPlace) {
    GuardedBuffer buffer(bytes);
    if (root) fillPattern(buffer.data(), bytes, shape.seed, shape.root);
    RANK_CHECK_SUCCESS(
        slimecclBroadcast(buffer.data(), buffer.data(), shape.count, shape.datatype, shape.root, comm, nullptr), comm);
    verifyPattern(buffer.data(), bytes, shape.seed, shape.root, "receive buffer");
    verifyGuards(buffer, "receive buffer");
    return;
  }
  // Off the root the send buffer holds data of its own, which must neither arrive anywhere nor change.
  SealedBuffer send(bytes);
  fillPattern(send.data(), bytes, shape.seed, root ? shape.root : nranks + rank);
  send.seal();
  GuardedBuffer recv(bytes);
  const void* sendbuff = root || !shape.unusedBuffersNull ? send.data() : nullptr;
  RANK_CHECK_SUCCESS(slimecclBroadcast(sendbuff, recv.data(), shape.count, shape.datatype, shape.root, comm, nullptr),
                     comm);
  verifyPattern(recv.data(), bytes, shape.seed, shape.root, "receive buffer");
  verifyGuards(recv, "receive buffer");
  send.verifyUnchanged(root ? "the send buffer" : "the send buffer off the root (unused there)");
}

void checkAlltoall(slimecclComm_t comm, const CallShape& shape) {
  const int rank = commRank(comm);
  const int nranks = commSize(comm);
  const size_t blockBytes = shape.count * datatypeSize(shape.datatype);
  const size_t totalBytes = blockBytes * static_cast<size_t>(nranks);
  auto block = [&](uint8_t* data, int index) { return data + static_cast<size_t>(index) * blockBytes; };
  auto verifyReceived = [&](uint8_t* recv) {
    for (int from = 0; from < nranks; ++from)
      verifyPattern(block(recv, from), blockBytes, shape.seed, alltoallBlockId(from, rank, nranks),
                    concat("receive block ", from));
  };
  if (shape.inPlace) {
    GuardedBuffer buffer(totalBytes);
    for (int to = 0; to < nranks; ++to)
      fillPattern(block(buffer.data(), to), blockBytes, shape.seed, alltoallBlockId(rank, to, nranks));
    RANK_CHECK_SUCCESS(slimecclAlltoAll(buffer.data(), buffer.data(), shape.count, shape.datatype, comm, nullptr),
                       comm);
    verifyReceived(buffer.data());
    verifyGuards(buffer, "send/receive buffer");
    return;
  }
  SealedBuffer send(totalBytes);
  for (int to = 0; to < nranks; ++to)
    fillPattern(block(send.data(), to), blockBytes, shape.seed, alltoallBlockId(rank, to, nranks));
  send.seal();
  GuardedBuffer recv(totalBytes);
  RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), shape.count, shape.datatype, comm, nullptr), comm);
  verifyReceived(recv.data());
  verifyGuards(recv, "receive buffer");
  send.verifyUnchanged("the send buffer");
}

void checkAllgather(slimecclComm_t comm, const CallShape& shape) {
  AllGatherBuffers buffers(commRank(comm), commSize(comm), shape.count, shape.datatype, shape.inPlace, shape.seed);
  RANK_CHECK_SUCCESS(
      slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(), buffers.datatype(), comm, nullptr),
      comm);
  buffers.verify();
}

}  // namespace slimeccl_test
