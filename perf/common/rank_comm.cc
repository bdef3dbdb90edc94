#include "common/rank_comm.h"

#include <vector>

#include "common/call_check.h"
#include "common/device_buffer.h"

namespace slimeccl_perf {

RankComm::RankComm(LocalProcess& process, int thread, StreamMode mode)
    : process_(process), rank_(globalRank(process.placement.rank, process.threads, thread)),
      nranks_(process.placement.count * process.threads) {
  check(slimecclCommInitRank(&comm_, nranks_, process.id, rank_), "slimecclCommInitRank");
  openStream(mode);
}

RankComm::RankComm(RankComm& parent, StreamMode mode)
    : process_(parent.process_), rank_(parent.rank_), nranks_(parent.nranks_) {
  check(slimecclCommSplit(parent.comm_, 0, rank_, &comm_, nullptr), "slimecclCommSplit");
  openStream(mode);
}

void RankComm::openStream(StreamMode mode) {
  if (mode == StreamMode::Host) check(slimecclStreamCreate(&stream_), "slimecclStreamCreate");
  if (mode == StreamMode::Cuda) {
    cudaStream_ = createCudaStream();
    check(slimecclStreamCreateFromCuda(&stream_, cudaStream_), "slimecclStreamCreateFromCuda");
  }
}

RankComm::~RankComm() {
  if (stream_ != nullptr) check(slimecclStreamDestroy(stream_), "slimecclStreamDestroy");
  if (cudaStream_ != nullptr) destroyCudaStream(cudaStream_);
  check(slimecclCommDestroy(comm_), "slimecclCommDestroy");
}

void RankComm::check(slimecclResult_t result, const char* function) const { checkCall(result, function, rank_, comm_); }

void RankComm::synchronize() const {
  if (stream_ != nullptr) check(slimecclStreamSynchronize(stream_), "slimecclStreamSynchronize");
}

void RankComm::barrier() {
  process_.threadBarrier.arrive_and_wait();
  if (process_.placement.count > 1) {
    // No rank can finish an AllGather before every rank has contributed to it.
    const char token = 0;
    std::vector<char> all(static_cast<size_t>(nranks_));
    allGatherBytes(&token, all.data(), 1);
  }
}

void RankComm::allGatherBytes(const void* mine, void* all, size_t bytes) {
  check(slimecclAllGather(mine, all, bytes, slimecclUint8, comm_, nullptr), "slimecclAllGather");
}

}  // namespace slimeccl_perf
