// The message queue of one shm connection: a single-producer single-consumer ring of cache-line
// slots, each a sequence word and 60 payload bytes. A message takes one or more consecutive slots;
// the writer fills a slot's payload and then publishes its sequence word, so a reader that sees
// the word sees the data in the same cache line: one write and one read per small message, and no
// separate doorbell word. Every message of a connection starts here (small ones are carried
// whole); larger payloads follow in the byte FIFO or are pulled by single copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace slimeccl {

struct alignas(64) Slot {
  std::atomic<uint32_t> seq;  // slot number n of the stream is valid when seq == n + 1 (mod 2^32)
  char payload[60];
};
static_assert(sizeof(Slot) == 64);

struct SlotRingHeader {
  alignas(64) std::atomic<uint64_t> consumed;  // slots ever released by the reader
  std::atomic<uint64_t> pulled;                // single-copy messages the reader has finished
  alignas(64) uint32_t slotCount;              // power of two
  std::atomic<uint32_t> singleCopyMode;        // SingleCopyMode, decided by the reader at accept
};

class SlotRing {
 public:
  static constexpr size_t kPayloadBytes = sizeof(Slot::payload);
  static size_t slotsFor(size_t bytes) { return bytes == 0 ? 1 : (bytes + kPayloadBytes - 1) / kPayloadBytes; }
  static size_t mappingBytes(size_t slotCount) { return sizeof(SlotRingHeader) + slotCount * sizeof(Slot); }
  static void format(void* mapping, size_t slotCount);
  explicit SlotRing(void* mapping);

  // Writer: puts the whole message (bytes of payload, spread over slots) or nothing.
  bool write(const void* message, size_t bytes);
  // Reader: whether the slot `ahead` places past the read position holds its message part.
  bool ready(size_t ahead) const;
  // Reader: whether a message starts at the read position. Polling, it also reads the sequence words
  // of the slots the last message took after its first (at most kMaxWarmedSlots), so that the cache
  // lines of a message of the same size come over together rather than one after the other (on two
  // cores of one machine, a 64 or 128-byte Send/Recv went from 0.54 to 0.46 us).
  bool headReady() const;
  static constexpr size_t kMaxWarmedSlots = 7;
  // Reader: copies n payload bytes starting at byte offset of the message at the read position.
  void copyOut(size_t offset, void* out, size_t n) const;
  // Reader: releases the slots of the message at the read position.
  void consume(size_t slots);

  SlotRingHeader* header() const { return header_; }

 private:
  Slot* slot(uint64_t n) const { return &slots_[n & mask_]; }
  SlotRingHeader* header_;
  Slot* slots_;
  uint64_t mask_;
  uint64_t written_ = 0;       // writer: slots ever written
  uint64_t consumedSeen_ = 0;  // writer: last value of header->consumed it read
  uint64_t read_ = 0;          // reader: slots ever consumed
  size_t lastSlots_ = 1;       // reader: the slots the last message took
};

}  // namespace slimeccl
