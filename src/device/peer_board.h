// The host side of the GPU-to-GPU path: a shared-memory board on which the ranks of a one-host
// communicator keep the flags their GPUs set on each other (pinned for the GPUs by
// src/device/gpu_peers.h, so the host can read and set them too), and post, for each op that may
// run GPU to GPU, what it is, whether this rank can run it there, and where its receive buffer is
// (a CUDA IPC handle, or the address for ranks of one process), and for reductions its send buffer. A rank reads its
// peers' posts before it queues copies into their buffers. Posts alternate between two slots per writer, each numbered
// by a counter that every rank advances alike, and a post waits until its readers have acknowledged the one two before
// it in that row: a group may post any number of ops before it reads any.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "include/slimeccl.h"
#include "src/base/sys/time.h"

namespace slimeccl {

constexpr size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

// Where a buffer is, as its owner sees it.
struct BufferAddress {
  uint8_t handle[kIpcHandleBytes];  // of the allocation holding it (unused between threads)
  uint64_t pointer;                 // the buffer's address in the owner's process
  uint64_t offset;                  // from the allocation's start
  uint8_t registered;               // its owner registered it: peers keep their mapping
};

// What a post says.
struct PostContents {
  uint64_t count;
  uint64_t bytes;
  int32_t root;
  uint8_t coll, type, redOp;
  uint8_t onGpu;  // this rank can run the op GPU to GPU
  BufferAddress recv;
  BufferAddress send;  // reductions, and a Broadcast's root: peers read the input here
  // PreMulSum (redOp kPreMulSumPost): the rank's scalar, or where it lies in device memory.
  uint64_t scalarBits;
  uint8_t scalarOnDevice;
  BufferAddress scalar;
  uint8_t inPlace;  // reductions: this rank's call is in place (ranks may differ)
  // Reductions: SLIMECCL_GPU_REDUCE_ALGO's GpuReductionAlgo; Broadcast: SLIMECCL_GPU_BROADCAST_ALGO's
  // GpuBroadcastAlgo; or kNoForcedAlgo.
  uint8_t forcedAlgo;
  uint8_t reduceKernels;  // this rank's GPU runs the reduction kernels (a Broadcast's scatter_pull)
};

// A post's forcedAlgo where the variable names none.
constexpr uint8_t kNoForcedAlgo = 0xff;

// The redOp a PreMulSum posts: every rank's operator has a number of its own.
constexpr uint8_t kPreMulSumPost = 0xfe;

struct BoardPost {
  std::atomic<uint64_t> number;  // written last: 1 + the post's counter value
  PostContents contents;
};

class PeerBoard {
 public:
  // Creates or opens the board named by `key` (the same on every rank) for nranks ranks.
  // flagKinds: the flags each rank keeps per peer.
  static slimecclResult_t attach(const uint8_t* key, size_t keyBytes, int nranks, int flagKinds,
                                 std::unique_ptr<PeerBoard>* out);
  // Removes the name once every rank has attached; the mappings stay.
  void unlinkName();
  ~PeerBoard();
  PeerBoard(const PeerBoard&) = delete;
  PeerBoard& operator=(const PeerBoard&) = delete;

  // Collectives: the post of `rank` for the collective numbered `number`.
  BoardPost* collPost(int rank, uint64_t number) const { return post(rank, number & 1); }
  // Point-to-point: the post of `from` for its message `number` to `to` (side 0: the Send, 1: the Recv).
  BoardPost* p2pPost(int side, int from, int to, uint64_t number) const {
    size_t pair = static_cast<size_t>(from) * nranks_ + to;
    return post(nranks_ + (static_cast<size_t>(side) * nranks_ * nranks_ + pair), number & 1);
  }

  // How many posts of a Send or Recv row their reader has taken (acknowledged in order).
  std::atomic<uint64_t>* p2pTaken(int side, int from, int to) const {
    return taken_ + static_cast<size_t>(side) * nranks_ * nranks_ + static_cast<size_t>(from) * nranks_ + to;
  }
  // How many of `writer`'s collective posts `reader` has taken.
  std::atomic<uint64_t>* collTaken(int writer, int reader) const {
    return collTaken_ + static_cast<size_t>(writer) * nranks_ + reader;
  }
  // Set by a rank whose comm failed, so that its peers fail too instead of waiting for it.
  std::atomic<uint32_t>* failed(int rank) const { return failed_ + rank; }

  static void publish(BoardPost* post, uint64_t number) { post->number.store(number + 1, std::memory_order_release); }
  static bool published(const BoardPost* post, uint64_t number) {
    return post->number.load(std::memory_order_acquire) == number + 1;
  }

  // The flags, page-aligned: for each owner rank, flagKinds x nranks 32-bit words.
  uint32_t* flags() const { return flags_; }
  size_t flagBytes() const { return flagBytes_; }

 private:
  PeerBoard() = default;
  BoardPost* post(size_t row, size_t slot) const { return posts_ + row * 2 + slot; }

  std::string name_;
  void* map_ = nullptr;
  size_t mapBytes_ = 0;
  int nranks_ = 0;
  BoardPost* posts_ = nullptr;
  std::atomic<uint64_t>* taken_ = nullptr;
  std::atomic<uint64_t>* collTaken_ = nullptr;
  std::atomic<uint32_t>* failed_ = nullptr;
  uint32_t* flags_ = nullptr;
  size_t flagBytes_ = 0;
};

}  // namespace slimeccl
