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

void verifyResults(const ReductionValues& values, const uint8_t* data, size_t firstElement, size_t count,
                   const char* what) {
  std::string mismatch = values.resultMismatch(data, firstElement, count);
  RANK_CHECK(mismatch.empty(), what, ": ", mismatch);
}

}  // namespace

void checkAllreduce(slimecclComm_t comm, const CallShape& shape) {
  const int rank = commRank(comm);
  const ReductionValues values(shape.datatype, shape.op, commSize(comm), shape.seed);
  const size_t bytes = shape.count * datatypeSize(shape.datatype);
  GuardedBuffer recv(bytes);
  std::optional<SealedBuffer> send;
  if (shape.inPlace) {
    values.fillInputs(recv.data(), rank, 0, shape.count);
  } else {
    send.emplace(bytes);
    values.fillInputs(send->data(), rank, 0, shape.count);
    send->seal();
  }
  RANK_CHECK_SUCCESS(slimecclAllReduce(send ? send->data() : recv.data(), recv.data(), shape.count, shape.datatype,
                                       shape.op, comm, nullptr),
                     comm);
  verifyResults(values, recv.data(), 0, shape.count, "receive buffer");
  verifyGuards(recv, "receive buffer");
  if (send) send->verifyUnchanged("the send buffer");
}

void checkReducescatter(slimecclComm_t comm, const CallShape& shape) {
  const int rank = commRank(comm);
  const int nranks = commSize(comm);
  const ReductionValues values(shape.datatype, shape.op, nranks, shape.seed);
  const size_t blockBytes = shape.count * datatypeSize(shape.datatype);
  const size_t total = shape.count * static_cast<size_t>(nranks);
  const size_t ownFirstElement = shape.count * static_cast<size_t>(rank);
  if (shape.inPlace) {
    // Only the rank's own block is specified afterwards; the rest of the send buffer is not.
    GuardedBuffer buffer(total * datatypeSize(shape.datatype));
    values.fillInputs(buffer.data(), rank, 0, total);
    uint8_t* recv = buffer.data() + static_cast<size_t>(rank) * blockBytes;
    RANK_CHECK_SUCCESS(slimecclReduceScatter(buffer.data(), recv, shape.count, shape.datatype, shape.op, comm, nullptr),
                       comm);
    verifyResults(values, recv, ownFirstElement, shape.count, "receive block (in the send buffer)");
    verifyGuards(buffer, "send/receive buffer");
    return;
  }
  SealedBuffer send(total * datatypeSize(shape.datatype));
  values.fillInputs(send.data(), rank, 0, total);
  send.seal();
  GuardedBuffer recv(blockBytes);
  RANK_CHECK_SUCCESS(
      slimecclReduceScatter(send.data(), recv.data(), shape.count, shape.datatype, shape.op, comm, nullptr), comm);
  verifyResults(values, recv.data(), ownFirstElement, shape.count, "receive buffer");
  verifyGuards(recv, "receive buffer");
  send.verifyUnchanged("the send buffer");
}

void checkReduce(slimecclComm_t comm, const CallShape& shape) {
  const int rank = commRank(comm);
  const bool root = rank == shape.root;
  const ReductionValues values(shape.datatype, shape.op, commSize(comm), shape.seed);
  const size_t bytes = shape.count * datatypeSize(shape.datatype);
  if (shape.inPlace) {
    // Off the root the shared buffer is only a send buffer, so it must come back unchanged.
    SealedBuffer buffer(bytes);
    values.fillInputs(buffer.data(), rank, 0, shape.count);
    buffer.seal();
    RANK_CHECK_SUCCESS(
        slimecclReduce(buffer.data(), buffer.data(), shape.count, shape.datatype, shape.op, shape.root, comm, nullptr),
        comm);
    if (root) {
      verifyResults(values, buffer.data(), 0, shape.count, "receive buffer at the root");
      buffer.verifyGuards("receive buffer at the root");
    } else {
      buffer.verifyUnchanged("the send buffer (also passed as recvbuff) off the root");
    }
    return;
  }
  SealedBuffer send(bytes);
  values.fillInputs(send.data(), rank, 0, shape.count);
  send.seal();
  GuardedBuffer rootRecv(root ? bytes : 0);
  SealedBuffer unusedRecv(root ? 0 : bytes);
  unusedRecv.seal();
  void* recvbuff = root ? rootRecv.data() : shape.unusedBuffersNull ? nullptr : unusedRecv.data();
  RANK_CHECK_SUCCESS(
      slimecclReduce(send.data(), recvbuff, shape.count, shape.datatype, shape.op, shape.root, comm, nullptr), comm);
  send.verifyUnchanged("the send buffer");
  if (root) {
    verifyResults(values, rootRecv.data(), 0, shape.count, "receive buffer at the root");
    verifyGuards(rootRecv, "receive buffer at the root");
  } else {
    unusedRecv.verifyUnchanged("the receive buffer off the root (unused there)");
  }
}

}  // namespace slimeccl_test
