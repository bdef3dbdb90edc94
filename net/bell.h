// A rank's doorbell: a futex word in a small shared mapping. Peers that move data for the rank
// ring it, so that the rank can sleep instead of spinning when it has nothing to do.
#pragma once

#include <atomic>
#include <cstdint>

namespace slimeccl {

struct BellWord {
  alignas(64) std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleepers;
};

class Bell {
 public:
  // Creates a fresh bell (memfd) owned by the local rank.
  static Bell* create();
  // Maps a peer's bell from a received file descriptor (takes ownership of fd).
  static Bell* attach(int fd);
  // A bell whose word lies in a mapping the caller owns and keeps alive (fd() is -1).
  static Bell* over(BellWord* word) { return new Bell(-1, word); }
  ~Bell();
  Bell(const Bell&) = delete;
  Bell& operator=(const Bell&) = delete;

  int fd() const { return fd_; }
  // Producer side: call after publishing data the owner may be waiting for.
  void ring() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (word_->sleepers.load(std::memory_order_relaxed) != 0) wake();
  }
  // Wakes the owner whether or not it sleeps (used by abort).
  void wake();
  // Owner side: announce sleep, re-check with stillIdle(), then sleep at most timeoutMs.
  template <typename Recheck>
  void sleepUnless(Recheck stillIdle, int timeoutMs) {
    word_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    uint32_t seen = word_->seq.load(std::memory_order_seq_cst);
    if (stillIdle()) sleepOn(seen, timeoutMs);
    word_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }

 private:
  Bell(int fd, BellWord* word) : fd_(fd), word_(word) {}
  void sleepOn(uint32_t seen, int timeoutMs);
  int fd_;
  BellWord* word_;
};

}  // namespace slimeccl
