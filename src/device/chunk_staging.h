// The host memory a communicator stages chunks of ops in (src/exec/chunked_run.h), and the copies
// between an op's buffers and it. The arena is allocated once, at init: pinned where the rank has
// a GPU (pinning may wait for the GPU to go idle, which must never happen while streams wait for
// this comm's ops), plain host memory otherwise. It is cut into kBays bays, one per round in
// flight: while the host runs the ops of one round, the copies into the next round's bay and out
// of the last one's run on copy streams of the comm's own (device memory, cudaMemcpy2DAsync, no
// SM), or are done at once (host memory, memcpy). CUDA-free: the core includes it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/gpu.h"
#include "src/exec/op_chunks.h"

namespace slimeccl {

class ChunkStaging {
 public:
  static constexpr int kBays = 3;

  // An arena of kBays bays, each for the two buffers of a chunk of chunkBytes; device >= 0:
  // pinned, copies on streams of that GPU.
  static slimecclResult_t create(int rank, int device, size_t chunkBytes, std::unique_ptr<ChunkStaging>* out);
  ~ChunkStaging();
  ChunkStaging(const ChunkStaging&) = delete;
  ChunkStaging& operator=(const ChunkStaging&) = delete;

  bool pinned() const { return pinned_; }
  int device() const { return device_; }  // the GPU it is pinned for, -1 for plain host memory
  size_t chunkBytes() const { return bayBytes_ / 2; }
  size_t bayBytes() const { return bayBytes_; }
  char* bay(int s) const { return arena_ + static_cast<size_t>(s) * bayBytes_; }

  // Before a round takes bay s: the copies out of the round that used it before have landed.
  slimecclResult_t reclaim(int s, const OpRecord& op);
  // Queues the copy of `rows` of `buffer` (the op's: memory of GPU `device`, or host memory where
  // device is -1, copied at once) to `staged`, after what `order` asks.
  slimecclResult_t copyIn(char* staged, const void* buffer, int device, const ChunkRows& rows, CopyOrder order,
                          const OpRecord& op);
  // Queues the copy of `bytes` from `src` to `dst`, both memory of GPU `device`, beside the copies
  // in (after what `order` asks); it has landed once they have.
  slimecclResult_t copyOnGpu(char* dst, const char* src, size_t bytes, int device, CopyOrder order, const OpRecord& op);
  // Marks the copies in queued so far as bay s's round's.
  slimecclResult_t sealIn(int s, const OpRecord& op);
  // Returns once the copies in of bay s's round have landed.
  slimecclResult_t awaitIn(int s, const OpRecord& op);
  // Queues the copy of a result at `staged` back to `rows` of `buffer` (on GPU `device`, or host
  // memory where -1, copied at once).
  slimecclResult_t copyOut(void* buffer, int device, const char* staged, const ChunkRows& rows, const OpRecord& op);
  // Marks the copies out queued so far as bay s's round's.
  slimecclResult_t sealOut(int s, const OpRecord& op);
  // Returns once every copy out queued so far has landed.
  slimecclResult_t awaitAllOut(const OpRecord& op);

  // Rounds queued ahead on a CUDA stream of this GPU (src/exec/queued_rounds.h): the same copies,
  // queued on `stream` (a cudaStream_t), in its order.
  slimecclResult_t queueIn(void* stream, char* staged, const void* buffer, const ChunkRows& rows, const OpRecord& op);
  slimecclResult_t queueOnGpu(void* stream, char* dst, const char* src, size_t bytes, const OpRecord& op);
  slimecclResult_t queueOut(void* stream, void* buffer, const char* staged, const ChunkRows& rows, const OpRecord& op);
  // Before a run's copies are queued on `stream` (of this arena's GPU; nothing to do for plain
  // host memory): it waits for the copies of the last run queued on a stream, which may be
  // another one.
  slimecclResult_t queueAfterLastRun(void* stream, const OpRecord& op);
  // After they are queued: they are the last run's; a run at once waits for them before it takes
  // a bay (reclaim).
  slimecclResult_t markLastRun(void* stream, const OpRecord& op);

 private:
  ChunkStaging() = default;
  // Copies rows between host memory and `device` memory: queued on `stream` after what `order`
  // asks, or done at once where stream is null (no GPU of the comm's own).
  slimecclResult_t copyRows(char* dst, size_t dstPitch, const char* src, size_t srcPitch, const ChunkRows& rows,
                            int device, void* stream, CopyOrder order, const OpRecord& op, const char* direction);
  // Records `event` after what `stream` holds so far (nothing without a GPU), and marks it sealed.
  slimecclResult_t seal(void* stream, void* event, bool* sealed, const OpRecord& op, const char* what);
  // Waits for a sealed event and unseals it.
  slimecclResult_t await(void* event, bool* sealed, const OpRecord& op, const char* what);

  int rank_ = -1;
  int device_ = -1;
  bool pinned_ = false;
  size_t bayBytes_ = 0;
  char* arena_ = nullptr;
  std::vector<char> plainArena_;
  // CUDA objects (cudaStream_t, cudaEvent_t), null without a GPU.
  void* inStream_ = nullptr;
  void* outStream_ = nullptr;
  void* legacyDone_ = nullptr;
  void* queuedRunDone_ = nullptr;  // after the copies of the last run queued on a CUDA stream
  bool queuedRunSealed_ = false;   // ... which a run at once has not waited for yet
  void* inDone_[kBays] = {};
  void* outDone_[kBays] = {};
  bool inSealed_[kBays] = {};
  bool outSealed_[kBays] = {};
};

}  // namespace slimeccl
