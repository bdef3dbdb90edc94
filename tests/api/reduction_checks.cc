// AllReduce, ReduceScatter and Reduce, checked element by element against ReductionValues.
#include <optional>

#include "buffers.h"
#include "collective_checks.h"
#include "harness.h"
#include "rank_check.h"
#include "reduction_expectations.h"
#include "sealed_buffer.h"

namespace slimeccl_test {

namespace {

void verify_results(const ReductionValues& values, const uint8_t* data, size_t first_element, size_t count,
                    const char* what) {
  std::string mismatch = values.result_mismatch(data, first_element, count);
  RANK_CHECK(mismatch.empty(), what, ": ", mismatch);
}

}  // namespace

void check_allreduce(slimecclComm_t comm, const CallShape& shape) {
  const int rank = comm_rank(comm);
  const ReductionValues values(shape.datatype, shape.op, comm_size(comm), shape.seed);
  const size_t bytes = shape.count * datatype_size(shape.datatype);
  GuardedBuffer recv(bytes);
  std::optional<SealedBuffer> send;
  if (shape.in_place) {
    values.fill_inputs(recv.data(), rank, 0, shape.count);
  } else {
    send.emplace(bytes);
    values.fill_inputs(send->data(), rank, 0, shape.count);
    send->seal();
  }
  RANK_CHECK_SUCCESS(slimecclAllReduce(send ? send->data() : recv.data(), recv.data(), shape.count, shape.datatype,
                                       shape.op, comm, nullptr),
                     comm);
  verify_results(values, recv.data(), 0, shape.count, "receive buffer");
  verify_guards(recv, "receive buffer");
  if (send) send->verify_unchanged("the send buffer");
}

void check_reducescatter(slimecclComm_t comm, const CallShape& shape) {
  const int rank = comm_rank(comm);
  const int nranks = comm_size(comm);
  const ReductionValues values(shape.datatype, shape.op, nranks, shape.seed);
  const size_t block_bytes = shape.count * datatype_size(shape.datatype);
  const size_t total = shape.count * static_cast<size_t>(nranks);
  const size_t own_first_element = shape.count * static_cast<size_t>(rank);
  if (shape.in_place) {
    // Only the rank's own block is specified afterwards; the rest of the send buffer is not.
    GuardedBuffer buffer(total * datatype_size(shape.datatype));
    values.fill_inputs(buffer.data(), rank, 0, total);
    uint8_t* recv = buffer.data() + static_cast<size_t>(rank) * block_bytes;
    RANK_CHECK_SUCCESS(slimecclReduceScatter(buffer.data(), recv, shape.count, shape.datatype, shape.op, comm, nullptr),
                       comm);
    verify_results(values, recv, own_first_element, shape.count, "receive block (in the send buffer)");
    verify_guards(buffer, "send/receive buffer");
    return;
  }
  SealedBuffer send(total * datatype_size(shape.datatype));
  values.fill_inputs(send.data(), rank, 0, total);
  send.seal();
  GuardedBuffer recv(block_bytes);
  RANK_CHECK_SUCCESS(
      slimecclReduceScatter(send.data(), recv.data(), shape.count, shape.datatype, shape.op, comm, nullptr), comm);
  verify_results(values, recv.data(), own_first_element, shape.count, "receive buffer");
  verify_guards(recv, "receive buffer");
  send.verify_unchanged("the send buffer");
}

void check_reduce(slimecclComm_t comm, const CallShape& shape) {
  const int rank = comm_rank(comm);
  const bool root = rank == shape.root;
  const ReductionValues values(shape.datatype, shape.op, comm_size(comm), shape.seed);
  const size_t bytes = shape.count * datatype_size(shape.datatype);
  if (shape.in_place) {
    // Off the root the shared buffer is only a send buffer, so it must come back unchanged.
    SealedBuffer buffer(bytes);
    values.fill_inputs(buffer.data(), rank, 0, shape.count);
    buffer.seal();
    RANK_CHECK_SUCCESS(
        slimecclReduce(buffer.data(), buffer.data(), shape.count, shape.datatype, shape.op, shape.root, comm, nullptr),
        comm);
    if (root) {
      verify_results(values, buffer.data(), 0, shape.count, "receive buffer at the root");
      buffer.verify_guards("receive buffer at the root");
    } else {
      buffer.verify_unchanged("the send buffer (also passed as recvbuff) off the root");
    }
    return;
  }
  SealedBuffer send(bytes);
  values.fill_inputs(send.data(), rank, 0, shape.count);
  send.seal();
  GuardedBuffer root_recv(root ? bytes : 0);
  SealedBuffer unused_recv(root ? 0 : bytes);
  unused_recv.seal();
  void* recvbuff = root ? root_recv.data() : shape.unused_buffers_null ? nullptr : unused_recv.data();
  RANK_CHECK_SUCCESS(
      slimecclReduce(send.data(), recvbuff, shape.count, shape.datatype, shape.op, shape.root, comm, nullptr), comm);
  send.verify_unchanged("the send buffer");
  if (root) {
    verify_results(values, root_recv.data(), 0, shape.count, "receive buffer at the root");
    verify_guards(root_recv, "receive buffer at the root");
  } else {
    unused_recv.verify_unchanged("the receive buffer off the root (unused there)");
  }
}

}  // namespace slimeccl_test
