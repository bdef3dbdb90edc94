// The shared slots' segment (src/exec/mailbox.h): its name stays until every rank has attached
// (then it is gone), every mapping shows the same memory, and each rank and op parity has a slot
// of its own; and the tuner rows that send calls to the slots stay within
// what a slot holds.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "algorithms/tuner.h"
#include "src/exec/mailbox.h"

namespace slimeccl {
namespace {

struct Secret {
  uint8_t bytes[32];
};

Secret secretFor(uint8_t seed) {
  Secret s;
  for (size_t i = 0; i < sizeof(s.bytes); ++i) s.bytes[i] = static_cast<uint8_t>(seed * 31 + i + getpid());
  return s;
}

void removeName(const Secret& secret) { shm_unlink(Mailbox::nameFor(secret.bytes, sizeof(secret.bytes)).c_str()); }

bool nameExists(const Secret& secret) {
  int fd = shm_open(Mailbox::nameFor(secret.bytes, sizeof(secret.bytes)).c_str(), O_RDWR, 0);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

TEST(Mailbox, LastRankToAttachRemovesTheNameAndAllMapTheSameSlots) {
  Secret secret = secretFor(1);
  std::unique_ptr<Mailbox> rank0, rank1;
  ASSERT_EQ(Mailbox::attach(secret.bytes, sizeof(secret.bytes), 0, 2, &rank0), slimecclSuccess);
  EXPECT_TRUE(nameExists(secret));
  ASSERT_EQ(Mailbox::attach(secret.bytes, sizeof(secret.bytes), 1, 2, &rank1), slimecclSuccess);
  EXPECT_FALSE(nameExists(secret));

  MailboxHead* written = rank0->slot(1, 7);
  rank0->data(written)[3] = 'x';
  rank0->directory(written)[1] = MailboxEntry{16, 5};
  written->seq.store(7);
  MailboxHead* read = rank1->slot(1, 7);
  EXPECT_EQ(read->seq.load(), 7u);
  EXPECT_EQ(rank1->data(read)[3], 'x');
  EXPECT_EQ(rank1->directory(read)[1].offset, 16u);
  EXPECT_EQ(rank1->directory(read)[1].bytes, 5u);
}

TEST(Mailbox, EveryRankAndParityHasItsOwnSlotWithRoomForTheCapacity) {
  Secret secret = secretFor(2);
  std::unique_ptr<Mailbox> box;
  constexpr int kRanks = 5;
  ASSERT_EQ(Mailbox::attach(secret.bytes, sizeof(secret.bytes), 0, kRanks, &box), slimecclSuccess);
  removeName(secret);
  std::set<char*> starts;
  for (int r = 0; r < kRanks; ++r)
    for (uint64_t seq : {1, 2}) {
      MailboxHead* slot = box->slot(r, seq);
      EXPECT_EQ(box->slot(r, seq + 2), slot) << "op numbers two apart share a slot";
      starts.insert(reinterpret_cast<char*>(slot));
      // The bytes and the directory of one slot end before the next slot begins.
      char* end = reinterpret_cast<char*>(box->directory(slot) + kRanks);
      for (int other = 0; other < kRanks; ++other)
        for (uint64_t s : {1, 2}) {
          char* begin = reinterpret_cast<char*>(box->slot(other, s));
          EXPECT_TRUE(begin <= reinterpret_cast<char*>(slot) || begin >= end) << "slots overlap";
        }
      EXPECT_EQ(box->capacity(), mailboxCapacity(kRanks));
      EXPECT_LE(box->data(slot) + box->capacity(), reinterpret_cast<char*>(box->directory(slot)));
      // The first bytes share the head's cache line (a tiny message is one line to move).
      EXPECT_EQ(box->data(slot) + kHeadBytes, reinterpret_cast<char*>(slot + 1));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 64, 0u);
    }
  EXPECT_EQ(starts.size(), 2u * kRanks);
}

// A rank that attaches after a peer has published and dropped its mapping still sees the slot.
TEST(Mailbox, ALateRankSeesWhatAnEarlierOneLeft) {
  Secret secret = secretFor(3);
  std::unique_ptr<Mailbox> early, late;
  ASSERT_EQ(Mailbox::attach(secret.bytes, sizeof(secret.bytes), 1, 2, &early), slimecclSuccess);
  early->slot(1, 1)->seq.store(1);
  early.reset();
  EXPECT_TRUE(nameExists(secret));
  ASSERT_EQ(Mailbox::attach(secret.bytes, sizeof(secret.bytes), 0, 2, &late), slimecclSuccess);
  EXPECT_EQ(late->slot(1, 1)->seq.load(), 1u);
  EXPECT_FALSE(nameExists(secret));
}

// Calls the table sends to the slots must fit them on every rank, or they would go over the nets
// with an algorithm chosen for the slots.
TEST(Mailbox, SharedSlotRowsOfTheTunerFitASlot) {
  int rows = 0;
  for (const TunerRow& row : defaultTunerTable()) {
    if (row.topo != TopoClass::SharedSlots) continue;
    ++rows;
    EXPECT_LE(row.maxRanks, kMailboxMaxRanks);
    // AllGather is keyed by all ranks' bytes; a rank publishes its own block.
    size_t perRankLimit = row.coll == Coll::AllGather ? row.maxBytes / row.minRanks : row.maxBytes;
    EXPECT_LE(perRankLimit, mailboxCapacity(row.minRanks)) << collKey(row.coll) << " row up to " << row.maxBytes;
  }
  EXPECT_GT(rows, 0);
}

TEST(Mailbox, TunerSendsTinyCallsToTheSlotsOnlyWhereACommHasThem) {
  TunerTopology slots{true, true}, noSlots{true, false};
  AlgoOverrides none;
  EXPECT_EQ(chooseAlgorithm(Coll::AllReduce, 8, 4, slots, none).algo, Algo::OneShot);
  EXPECT_NE(chooseAlgorithm(Coll::AllReduce, 8, 4, noSlots, none).algo, Algo::OneShot);
  EXPECT_EQ(chooseAlgorithm(Coll::AllGather, 64, 8, slots, none).algo, Algo::Direct);
  EXPECT_NE(chooseAlgorithm(Coll::AllGather, 64, 8, noSlots, none).algo, Algo::Direct);
  EXPECT_EQ(chooseAlgorithm(Coll::AlltoAll, 64, 4, slots, none).algo, Algo::Pairwise);
  EXPECT_EQ(chooseAlgorithm(Coll::AlltoAll, 64, 4, noSlots, none).algo, Algo::Bruck);
}

}  // namespace
}  // namespace slimeccl
