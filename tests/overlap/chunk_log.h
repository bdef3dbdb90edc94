// What an AllGatherOverlap callback saw, recorded from the library's thread and checked afterwards
// on the rank's own thread (a failed check cannot throw across the library's C boundary).
#pragma once

#include <slimeccl.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace slimeccl_test {

// The bytes rank `rank` contributes to an AllGather of `bytes` bytes per rank.
std::vector<unsigned char> blockPattern(int rank, size_t bytes, uint64_t seed);

class ChunkLog {
 public:
  ChunkLog(int nranks, size_t count, size_t blockBytes, uint64_t seed)
      : nranks_(nranks), count_(count), blockBytes_(blockBytes), seed_(seed) {}

  // The slimecclChunkFn to pass, with `this` as user.
  static void onChunk(int srcRank, void* chunk, size_t count, void* user);

  // Throws RankFailure unless every rank's block came exactly once, the own block first, each at
  // its place in recvbuff with its final bytes, one callback at a time and never on `caller`.
  void verify(int rank, const unsigned char* recvbuff, std::thread::id caller) const;

 private:
  void record(int srcRank, void* chunk, size_t count);

  const int nranks_;
  const size_t count_;
  const size_t blockBytes_;
  const uint64_t seed_;
  std::atomic<int> running_{0};
  mutable std::mutex mutex_;
  std::vector<int> order_;
  std::vector<const void*> chunks_;
  std::vector<std::thread::id> threads_;
  std::vector<std::string> problems_;
};

}  // namespace slimeccl_test
