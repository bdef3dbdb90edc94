#include "src/op.h"

#include <fmt/format.h>

#include <cstdint>

#include "src/comm.h"
#include "src/base/error.h"

namespace slimeccl {

bool isInPlace(const OpRecord& op) {
  const char* send = static_cast<const char*>(op.sendbuff);
  const char* recv = static_cast<const char*>(op.recvbuff);
  int rank = op.comm->rank;
  switch (op.coll) {
    case Coll::AllGather: return send == recv + rank * op.bytes();
    case Coll::ReduceScatter: return recv == send + rank * op.bytes();
    case Coll::AllReduce: return send == recv;
    case Coll::Broadcast:
    case Coll::Reduce: return rank == op.root && send == recv;
    default: return false;
  }
}

bool largestBufferBytes(const OpRecord& op, size_t* bytes) {
  size_t perRank = 0;
  if (__builtin_mul_overflow(op.count, typeSize(op.type), &perRank)) return false;
  bool perRankBlocks = op.coll == Coll::AllGather || op.coll == Coll::ReduceScatter || op.coll == Coll::AlltoAll;
  return !__builtin_mul_overflow(perRank, perRankBlocks ? static_cast<size_t>(op.comm->nranks) : 1, bytes);
}

Region readRegion(const OpRecord& op) {
  const char* send = static_cast<const char*>(op.sendbuff);
  const size_t n = static_cast<size_t>(op.comm->nranks);
  switch (op.coll) {
    case Coll::Send:
    case Coll::AllGather:
    case Coll::AllReduce:
    case Coll::Reduce: return {send, op.bytes()};
    case Coll::Broadcast: return op.comm->rank == op.root ? Region{send, op.bytes()} : Region{};
    case Coll::ReduceScatter:
    case Coll::AlltoAll: return {send, op.bytes() * n};
    case Coll::Recv: return {};
  }
  return {};
}

Region writtenRegion(const OpRecord& op) {
  const char* recv = static_cast<const char*>(op.recvbuff);
  const size_t n = static_cast<size_t>(op.comm->nranks);
  switch (op.coll) {
    case Coll::Recv:
    case Coll::ReduceScatter:
    case Coll::AllReduce:
    case Coll::Broadcast: return {recv, op.bytes()};
    case Coll::Reduce: return op.comm->rank == op.root ? Region{recv, op.bytes()} : Region{};
    case Coll::AllGather:
    case Coll::AlltoAll: return {recv, op.bytes() * n};
    case Coll::Send: return {};
  }
  return {};
}

std::string describeOp(const OpRecord& op) {
  if (op.isP2P())
    return fmt::format("{} (count {}, {}, {} bytes) {} peer {}", collName(op.coll), op.count, typeName(op.type),
                       op.bytes(), op.coll == Coll::Send ? "to" : "from", op.peer);
  return fmt::format("{} (seq {}, count {}, {}, {} bytes per rank)", collName(op.coll), op.seq, op.count,
                     typeName(op.type), op.bytes());
}

namespace {

// What "in place" means for the op, for the sentence that refuses a partial overlap.
std::string inPlaceForm(const OpRecord& op) {
  switch (op.coll) {
    case Coll::AllGather:
      return fmt::format("sendbuff == recvbuff + rank * count * size = recvbuff + {}", op.comm->rank * op.bytes());
    case Coll::ReduceScatter:
      return fmt::format("recvbuff == sendbuff + rank * recvcount * size = sendbuff + {}", op.comm->rank * op.bytes());
    default: return "sendbuff == recvbuff";
  }
}

bool wrapsAround(const Region& r) {
  uintptr_t end = 0;
  return __builtin_add_overflow(reinterpret_cast<uintptr_t>(r.data), r.bytes, &end);
}

}  // namespace

slimecclResult_t checkOpBuffers(const OpRecord& op) {
  if (op.isP2P()) {
    // One buffer, checked in a few instructions for the small messages that come by the thousand;
    // one that fails goes through the checks below for its sentence.
    size_t bytes = 0;
    const char* buffer = static_cast<const char*>(op.coll == Coll::Send ? op.sendbuff : op.recvbuff);
    if (!__builtin_mul_overflow(op.count, typeSize(op.type), &bytes) && bytes <= static_cast<size_t>(PTRDIFF_MAX) &&
        !wrapsAround(Region{buffer, bytes}))
      return slimecclSuccess;
  }
  slimecclComm* comm = op.comm;
  const char* opName = collName(op.coll);
  size_t largest = 0;
  if (!largestBufferBytes(op, &largest) || largest > static_cast<size_t>(PTRDIFF_MAX))
    return fail(slimecclInvalidArgument,
                "rank {}: {}: count {} of {} ({}-byte elements{}) is more bytes than a buffer can hold", comm->rank,
                opName, op.count, typeName(op.type), typeSize(op.type),
                op.isP2P() || op.coll == Coll::AllReduce || op.coll == Coll::Broadcast || op.coll == Coll::Reduce
                    ? ""
                    : fmt::format(", {} blocks", comm->nranks));
  Region in = readRegion(op), out = writtenRegion(op);
  for (const Region* r : {&in, &out})
    if (wrapsAround(*r))
      return fail(slimecclInvalidArgument, "rank {}: {}: {} at {} with {} bytes runs past the end of the address space",
                  comm->rank, opName, r == &in ? "sendbuff" : "recvbuff", static_cast<const void*>(r->data), r->bytes);
  if (op.isP2P()) return slimecclSuccess;  // one buffer
  uintptr_t inAt = reinterpret_cast<uintptr_t>(in.data), outAt = reinterpret_cast<uintptr_t>(out.data);
  bool overlap = in.bytes != 0 && out.bytes != 0 && inAt < outAt + out.bytes && outAt < inAt + in.bytes;
  // AlltoAll in place (the same buffer) is served by a snapshot of what it overwrites.
  bool allowed = isInPlace(op) || (op.coll == Coll::AlltoAll && in.data == out.data);
  if (overlap && !allowed)
    return fail(slimecclInvalidArgument,
                "rank {}: {}: sendbuff {} ({} bytes) and recvbuff {} ({} bytes) overlap but not in place (in place "
                "is {}): the op would read bytes it has already overwritten",
                comm->rank, opName, static_cast<const void*>(in.data), in.bytes, static_cast<const void*>(out.data),
                out.bytes, inPlaceForm(op));
  return slimecclSuccess;
}

}  // namespace slimeccl
