// What a comm's small ops by flagged lines (src/device/line_protocol.h) need, made at setup: this
// rank's landing zone in device memory, where its peers' steps land and its acknowledgements to them
// are read, mapped by every peer (CUDA IPC between processes, peer access between threads); the
// kernels' own words in device memory; and the progress words in pinned host memory through which
// the kernels tell the host how far they got and the host lets them go. No host thread takes part
// in an op: the watchdog reads the progress words now and then. CUDA-free: the core includes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/line_protocol.h"

namespace slimeccl {

class LandingZone {
 public:
  // What a rank tells the others of its zone.
  struct Address {
    uint64_t pointer;  // in its own process
    uint8_t handle[64];
  };

  // Allocates this rank's zone on the current GPU; *why says what failed.
  static std::unique_ptr<LandingZone> create(int rank, int nranks, std::string* why);
  ~LandingZone();
  LandingZone(const LandingZone&) = delete;
  LandingZone& operator=(const LandingZone&) = delete;

  // Where this zone is, for the peers; `share` where they are other processes (CUDA IPC).
  bool address(bool share, Address* out, std::string* why) const;
  // Maps every peer's zone; `sameProcess[r]`: rank r is a thread of this process.
  bool open(const std::vector<Address>& zones, const std::vector<bool>& sameProcess, std::string* why);

  // A job with this comm's zones, words and rank filled in.
  LineJob jobTemplate() const;
  // A kernel not captured in a graph is launched with `blocks` blocks: the count of such blocks
  // that have finished reaches the value returned once it is done.
  uint32_t countBlocks(int blocks) {
    return __atomic_add_fetch(&launchedBlocks_, static_cast<uint32_t>(blocks), __ATOMIC_ACQ_REL);
  }
  // Whether a kernel on GPU `device` reaches the bytes at `p` (src/device/gpu.h's kernelReaches);
  // the device allocations found so are remembered (a few), so a buffer used again costs no query.
  bool reaches(const void* p, size_t bytes, int device);
  // Device memory of at least `bytes` for a job's snapshot of its sources. A larger one replaces a
  // smaller, which is kept until the comm ends (a captured graph may still use it). Null on failure.
  void* snapshotSpace(uint64_t bytes);

  // Read by the watchdog: whether some kernel's thread has waited long and still waits, the call
  // of the kernel that reported last, and its report's id (a thread that goes on waiting reports
  // again with a new one every few thousand polls).
  bool stuck(LineSignature* call, uint64_t* report) const;
  // Whether some kernel not captured in a graph has yet to finish (reads the count on the GPU: for
  // teardown, not for every op).
  bool eagerPending();
  // Whether every step this rank sent has been acknowledged by its receiver: then no peer's kernel
  // writes into this zone any more, and it may be freed (a peer thread's kernel writes through a
  // plain pointer; reads the GPU's words, for teardown).
  bool acknowledged();
  // The device address of the count of finished blocks (a 32-bit word that wraps): a stream that must
  // follow the comm's last kernel waits until the count reaches what countBlocks returned for it.
  uint64_t doneBlocksOnDevice() const;
  // A kernel found a peer's call unlike this rank's: which peer and the two calls.
  bool mismatch(int* peer, LineSignature* mine, LineSignature* theirs) const;
  // Every wait of every kernel of the comm gives up from now on.
  void release();

 private:
  LandingZone() = default;

  int rank_ = 0, nranks_ = 0;
  void* zone_ = nullptr;              // this rank's, device memory
  void* state_ = nullptr;             // LineState, device memory
  LineProgress* progress_ = nullptr;  // pinned host memory
  uint64_t progressOnDevice_ = 0;
  std::vector<uint64_t> peerZones_;     // by rank, as this process addresses them
  std::vector<void*> opened_;           // IPC mappings to close
  uint32_t launchedBlocks_ = 0;         // of kernels not captured in a graph
  void* reader_ = nullptr;              // a stream of its own for eagerPending's copy
  uint32_t* doneBlocksCopy_ = nullptr;  // pinned host memory the copy lands in
  std::vector<void*> snapshots_;        // the largest last
  struct Range {
    uintptr_t begin = 0, end = 0;
  };
  static constexpr int kRemembered = 16;
  Range remembered_[kRemembered];  // device allocations of the comm's GPU, most recent first
  uint64_t snapshotBytes_ = 0;
};

}  // namespace slimeccl
