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

void verify_pattern(const uint8_t* data, size_t bytes, uint64_t seed, int pattern_id, const std::string& what) {
  std::string mismatch = pattern_mismatch(data, bytes, seed, pattern_id);
  RANK_CHECK(mismatch.empty(), what, ": ", mismatch);
}

// The pattern of the AlltoAll block that rank `from` sends to rank `to`.
int alltoall_block_id(int from, int to, int nranks) { return from * nranks + to; }

}  // namespace

void check_broadcast(slimecclComm_t comm, const CallShape& shape) {
  const int rank = comm_rank(comm);
  const int nranks = comm_size(comm);
  const bool root = rank == shape.root;
  const size_t bytes = shape.count * datatype_size(shape.datatype);
  if (shape.in_place) {
    GuardedBuffer buffer(bytes);
    if (root) fill_pattern(buffer.data(), bytes, shape.seed, shape.root);
    RANK_CHECK_SUCCESS(
        slimecclBroadcast(buffer.data(), buffer.data(), shape.count, shape.datatype, shape.root, comm, nullptr), comm);
    verify_pattern(buffer.data(), bytes, shape.seed, shape.root, "receive buffer");
    verify_guards(buffer, "receive buffer");
    return;
  }
  // Off the root the send buffer holds data of its own, which must neither arrive anywhere nor change.
  SealedBuffer send(bytes);
  fill_pattern(send.data(), bytes, shape.seed, root ? shape.root : nranks + rank);
  send.seal();
  GuardedBuffer recv(bytes);
  const void* sendbuff = root || !shape.unused_buffers_null ? send.data() : nullptr;
  RANK_CHECK_SUCCESS(slimecclBroadcast(sendbuff, recv.data(), shape.count, shape.datatype, shape.root, comm, nullptr),
                     comm);
  verify_pattern(recv.data(), bytes, shape.seed, shape.root, "receive buffer");
  verify_guards(recv, "receive buffer");
  send.verify_unchanged(root ? "the send buffer" : "the send buffer off the root (unused there)");
}

void check_alltoall(slimecclComm_t comm, const CallShape& shape) {
  const int rank = comm_rank(comm);
  const int nranks = comm_size(comm);
  const size_t block_bytes = shape.count * datatype_size(shape.datatype);
  const size_t total_bytes = block_bytes * static_cast<size_t>(nranks);
  auto block = [&](uint8_t* data, int index) { return data + static_cast<size_t>(index) * block_bytes; };
  auto verify_received = [&](uint8_t* recv) {
    for (int from = 0; from < nranks; ++from)
      verify_pattern(block(recv, from), block_bytes, shape.seed, alltoall_block_id(from, rank, nranks),
                     concat("receive block ", from));
  };
  if (shape.in_place) {
    GuardedBuffer buffer(total_bytes);
    for (int to = 0; to < nranks; ++to)
      fill_pattern(block(buffer.data(), to), block_bytes, shape.seed, alltoall_block_id(rank, to, nranks));
    RANK_CHECK_SUCCESS(slimecclAlltoAll(buffer.data(), buffer.data(), shape.count, shape.datatype, comm, nullptr),
                       comm);
    verify_received(buffer.data());
    verify_guards(buffer, "send/receive buffer");
    return;
  }
  SealedBuffer send(total_bytes);
  for (int to = 0; to < nranks; ++to)
    fill_pattern(block(send.data(), to), block_bytes, shape.seed, alltoall_block_id(rank, to, nranks));
  send.seal();
  GuardedBuffer recv(total_bytes);
  RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), shape.count, shape.datatype, comm, nullptr), comm);
  verify_received(recv.data());
  verify_guards(recv, "receive buffer");
  send.verify_unchanged("the send buffer");
}

void check_allgather(slimecclComm_t comm, const CallShape& shape) {
  AllGatherBuffers buffers(comm_rank(comm), comm_size(comm), shape.count, shape.datatype, shape.in_place, shape.seed);
  RANK_CHECK_SUCCESS(
      slimecclAllGather(buffers.sendbuff(), buffers.recvbuff(), buffers.count(), buffers.datatype(), comm, nullptr),
      comm);
  buffers.verify();
}

}  // namespace slimeccl_test
