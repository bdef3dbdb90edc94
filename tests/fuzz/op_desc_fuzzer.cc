// The op descriptor that opens every session (the wire header of each op) against a local call:
// the first 16 bytes describe the local call, the next 64 are the peer's descriptor as it arrived.
// checkPeerDesc must accept exactly the descriptors of a matching call from that peer.
#include <cstring>

#include "src/base/error.h"
#include "src/exec/plan.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace slimeccl;

constexpr int kRanks = 4;
constexpr int kColls = 8;

struct LocalCall {
  uint8_t coll;
  uint8_t type;
  uint8_t redOp;
  uint8_t placement;  // rank, peer offset and (for collectives) direction
  int32_t root;
  uint32_t count;
  uint32_t seq;
};
static_assert(sizeof(LocalCall) == 16);

// What the contract says a session accepts: the peer's own descriptor of the matching call
// (Send meets Recv; a collective meets the same collective with the same sequence, count, type,
// root and reduction) for the same number of bytes.
bool matches(const OpDesc& mine, const OpDesc& theirs, int peer) {
  if (theirs.magic != kOpDescMagic || theirs.rank != peer || theirs.isP2P != mine.isP2P) return false;
  if (mine.isP2P) {
    uint8_t partner = static_cast<uint8_t>(mine.coll == static_cast<uint8_t>(Coll::Send) ? Coll::Recv : Coll::Send);
    return theirs.coll == partner && theirs.bytes == mine.bytes;
  }
  return theirs.coll == mine.coll && theirs.seq == mine.seq && theirs.count == mine.count && theirs.type == mine.type &&
         theirs.root == mine.root && theirs.redOp == mine.redOp && theirs.bytes == mine.bytes;
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t bytes[sizeof(LocalCall) + sizeof(OpDesc)] = {};
  memcpy(bytes, data, size < sizeof(bytes) ? size : sizeof(bytes));
  LocalCall call;
  memcpy(&call, bytes, sizeof(call));

  OpPlan plan;
  plan.nranks = kRanks;
  OpRecord& op = plan.op;
  op.coll = static_cast<Coll>(call.coll % kColls);
  op.type = static_cast<slimecclDataType_t>(call.type % slimecclNumTypes);
  op.redOp = static_cast<slimecclRedOp_t>(call.redOp % slimecclNumOps);
  op.root = call.root;
  op.count = call.count;
  op.seq = call.seq;
  int rank = call.placement % kRanks;
  int peer = (rank + 1 + call.placement / kRanks % (kRanks - 1)) % kRanks;
  op.peer = peer;

  Session session;
  session.peer = peer;
  session.sending = op.isP2P() ? op.coll == Coll::Send : (call.placement & 0x40) != 0;
  fillDesc(op, rank, op.bytes(), &session.local);
  memcpy(&session.remote, bytes + sizeof(LocalCall), sizeof(OpDesc));

  clearThreadError();
  slimecclResult_t rc = checkPeerDesc(plan, session);
  bool expected = matches(session.local, session.remote, peer);
  FUZZ_REQUIRE((rc == slimecclSuccess) == expected, "checkPeerDesc disagrees with the contract");
  if (rc == slimecclSuccess) return 0;
  FUZZ_REQUIRE(rc == slimecclInvalidUsage || rc == slimecclRemoteError, "a mismatch gives an unexpected code");
  FUZZ_REQUIRE(threadError().find("rank " + std::to_string(rank)) != std::string::npos,
               "the mismatch sentence does not name this rank");
  FUZZ_REQUIRE(threadError().find(std::to_string(peer)) != std::string::npos,
               "the mismatch sentence does not name the peer");
  return 0;
}
