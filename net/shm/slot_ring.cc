#include "net/shm/slot_ring.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace slimeccl {

void SlotRing::format(void* mapping, size_t slotCount) {
  auto* header = new (mapping) SlotRingHeader;
  header->consumed.store(0, std::memory_order_relaxed);
  header->pulled.store(0, std::memory_order_relaxed);
  header->slotCount = static_cast<uint32_t>(slotCount);
  header->singleCopyMode.store(0, std::memory_order_relaxed);
  auto* slots = reinterpret_cast<Slot*>(static_cast<char*>(mapping) + sizeof(SlotRingHeader));
  for (size_t i = 0; i < slotCount; ++i) new (&slots[i]) Slot{};
}

SlotRing::SlotRing(void* mapping)
    : header_(static_cast<SlotRingHeader*>(mapping)),
      slots_(reinterpret_cast<Slot*>(static_cast<char*>(mapping) + sizeof(SlotRingHeader))),
      mask_(header_->slotCount - 1) {}

bool SlotRing::write(const void* message, size_t bytes) {
  size_t need = slotsFor(bytes);
  if (written_ + need - consumedSeen_ > mask_ + 1) {
    // Only a ring that looks full costs a read of the reader's cache line.
    consumedSeen_ = header_->consumed.load(std::memory_order_acquire);
    if (written_ + need - consumedSeen_ > mask_ + 1) return false;
  }
  const char* from = static_cast<const char*>(message);
  for (size_t i = 0; i < need; ++i) {
    Slot* s = slot(written_ + i);
    size_t n = bytes - i * kPayloadBytes < kPayloadBytes ? bytes - i * kPayloadBytes : kPayloadBytes;
    memcpy(s->payload, from + i * kPayloadBytes, n);
    s->seq.store(static_cast<uint32_t>(written_ + i + 1), std::memory_order_release);
  }
  written_ += need;
  return true;
}

bool SlotRing::ready(size_t ahead) const {
  uint64_t n = read_ + ahead;
  return slot(n)->seq.load(std::memory_order_acquire) == static_cast<uint32_t>(n + 1);
}

bool SlotRing::headReady() const {
  const bool head = ready(0);
  const size_t warmed = std::min(lastSlots_, kMaxWarmedSlots + 1);
  // The loads are what counts: each asks for its line while the others are on their way.
  for (size_t i = 1; i < warmed; ++i) (void)ready(i);
  return head;
}

void SlotRing::copyOut(size_t offset, void* out, size_t n) const {
  char* to = static_cast<char*>(out);
  while (n > 0) {
    const Slot* s = slot(read_ + offset / kPayloadBytes);
    size_t at = offset % kPayloadBytes;
    size_t take = n < kPayloadBytes - at ? n : kPayloadBytes - at;
    memcpy(to, s->payload + at, take);
    to += take;
    offset += take;
    n -= take;
  }
}

void SlotRing::consume(size_t slots) {
  read_ += slots;
  lastSlots_ = slots;
  header_->consumed.store(read_, std::memory_order_release);
}

}  // namespace slimeccl
