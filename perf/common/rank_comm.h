// One rank of the run: its communicator, the stream timed ops go to, and barriers across ranks.
#pragma once

#include <barrier>
#include <cstddef>

#include "common/process_env.h"
#include "slimeccl.h"

namespace slimeccl_perf {

// What the rank threads of one process share.
struct LocalProcess {
  LocalProcess(const ProcessPlacement& placement, int threads, const slimecclUniqueId& id)
      : placement(placement), threads(threads), id(id), threadBarrier(threads) {}

  ProcessPlacement placement;
  int threads;
  slimecclUniqueId id;
  std::barrier<> threadBarrier;
};

// Where timed ops go: the NULL stream (each call returns when done), a slimeccl host stream, or
// a slimeccl stream in the order of a CUDA stream of the tool's own.
enum class StreamMode { Blocking, Host, Cuda };

class RankComm {
 public:
  // Joins the communicator (collective across all ranks).
  RankComm(LocalProcess& process, int thread, StreamMode mode);
  // A communicator of the same ranks split from `parent` (collective across all ranks); it reads
  // the environment anew, so SLIMECCL_ALGO may differ from the parent's.
  RankComm(RankComm& parent, StreamMode mode);
  ~RankComm();
  RankComm(const RankComm&) = delete;
  RankComm& operator=(const RankComm&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  slimecclComm_t comm() const { return comm_; }
  slimecclStream_t stream() const { return stream_; }
  // StreamMode::Cuda: the cudaStream_t that stream() follows; null otherwise.
  void* cudaStream() const { return cudaStream_; }

  void check(slimecclResult_t result, const char* function) const;
  // Waits for everything issued on stream().
  void synchronize() const;
  // Returns once every rank has arrived.
  void barrier();
  // AllGather of `bytes` bytes per rank on the NULL stream, for the harness's own exchanges.
  void allGatherBytes(const void* mine, void* all, size_t bytes);

 private:
  void openStream(StreamMode mode);

  LocalProcess& process_;
  int rank_;
  int nranks_;
  slimecclComm_t comm_ = nullptr;
  slimecclStream_t stream_ = nullptr;
  void* cudaStream_ = nullptr;  // StreamMode::Cuda: the cudaStream_t stream_ follows
};

}  // namespace slimeccl_perf
