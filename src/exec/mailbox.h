// The shared slots of a communicator whose ranks are all on one host: one segment mapped by every
// rank, with a line per rank announcing its current collective, and two slots per rank
// (alternating by op), each a head, the bytes, and a directory (which bytes are for which peer). Tiny collectives write
// their outgoing data once into their own slot and read the peers' straight from theirs, with no net messages
// (src/exec/mailbox_run.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "net/bell.h"
#include "src/exec/plan.h"

namespace slimeccl {

// Bytes a rank may publish in one op; mailboxCarries admits only calls whose bytes fit, judged
// from the call and the rank count alone so that all ranks agree. On two ranks the net paths
// already lead the slots from 14 KiB per rank (docs/tuning.md); from three ranks one write read by
// every peer leads or ties them up to 64 KiB per rank (docs/performance.md, "Shared slots up to
// 64 KiB per rank").
constexpr size_t kMailboxCapacityTwoRanks = 16 * 1024;
constexpr size_t kMailboxCapacity = 64 * 1024;
inline size_t mailboxCapacity(int nranks) { return nranks <= 2 ? kMailboxCapacityTwoRanks : kMailboxCapacity; }
constexpr int kMailboxMaxRanks = 64;
// A reader polling a peer's head asks for at most this many of the lines after it that it will read
// (on two cores here, a 256-byte AllGather of two ranks took 0.46 us so against 0.50).
constexpr size_t kMailboxWarmedLines = 7;

// Where in the sender's slot the bytes for a peer are.
struct MailboxEntry {
  uint32_t offset;
  uint32_t bytes;
};
constexpr uint32_t kNoEntry = UINT32_MAX;

// A slot's first cache line: a reader polling `seq` gets the call to compare with in the same
// line, and, when every peer gets the same bytes, where they are. The published bytes start in
// this line too (`bytes`, continued in the lines after it): a message of up to kHeadBytes moves
// between cores as one line, where a separate line would cost a second transfer (about 80 ns
// more per op between two cores here).
struct MailboxHead {
  alignas(64) std::atomic<uint64_t> seq;  // written last: the op number whose contents follow
  MailboxEntry uniform;                   // the bytes every receiving peer reads; bytes == kNoEntry: see the directory
  uint64_t count;
  uint64_t collSeq;
  int32_t root;
  uint8_t coll, type, redOp;
  uint8_t failed;  // the rank failed this op: the head carries its call, no bytes
  char bytes[24];  // the first published bytes
};
static_assert(sizeof(MailboxHead) == 64);
constexpr size_t kHeadBytes = sizeof(MailboxHead::bytes);

// The collective a rank runs now, posted for every collective of the comm (slots or not), so that
// ranks whose mismatched calls took different paths (one through the slots, one over the nets)
// still see each other's call. A seqlock: version is odd while the fields change.
struct MailboxCall {
  alignas(64) std::atomic<uint64_t> version;
  std::atomic<uint64_t> collSeq, count;
  std::atomic<int32_t> root;
  std::atomic<uint8_t> coll, type, redOp;
};

class Mailbox {
 public:
  // Creates or opens the comm's segment (named from `key`, random bytes of the comm's rank 0) and
  // maps it. The last rank to
  // attach removes the name, so nothing outlives the ranks. Not before: a rank may attach after
  // its peers have run (and failed) an op and destroyed their comm, and must still see their
  // slots. So a rank that never attaches (its init failed) leaves the name behind.
  static slimecclResult_t attach(const uint8_t* key, size_t keyBytes, int rank, int nranks,
                                 std::unique_ptr<Mailbox>* out);
  // The segment's name in /dev/shm for a key.
  static std::string nameFor(const uint8_t* key, size_t keyBytes);
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Layout of a slot: head, capacity() bytes (from the head's `bytes` on), then one directory
  // entry per peer from the next cache line.
  MailboxHead* slot(int rank, uint64_t seq) const {
    size_t index = static_cast<size_t>(rank) * 2 + (seq & 1);
    return reinterpret_cast<MailboxHead*>(slots_ + index * slotBytes_);
  }
  char* data(MailboxHead* s) const { return s->bytes; }
  MailboxEntry* directory(MailboxHead* s) const {
    return reinterpret_cast<MailboxEntry*>(reinterpret_cast<char*>(s) + directoryOffset_);
  }
  size_t capacity() const { return capacity_; }
  // Posts this rank's current collective.
  void announce(int rank, const OpRecord& op);
  // The collective `peer` runs now, as a descriptor; false while it changes or before its first.
  bool announced(int peer, OpDesc* out) const;
  // Woken after every publish; sleepers of all ranks share it.
  Bell* bell() const { return bell_.get(); }
  // The next op number of this rank's comm (the same sequence on every rank).
  uint64_t nextSeq() { return ++seq_; }

 private:
  Mailbox() = default;

  std::string name_;
  void* map_ = nullptr;
  size_t mapBytes_ = 0;
  size_t capacity_ = 0;
  size_t directoryOffset_ = 0;
  size_t slotBytes_ = 0;
  MailboxCall* calls_ = nullptr;
  char* slots_ = nullptr;
  std::unique_ptr<Bell> bell_;
  uint64_t seq_ = 0;
};

}  // namespace slimeccl
