// The ops of one group on a CUDA-ordered stream (src/device/cuda_stream_binding.h), with every CUDA
// call the group needs made when it is queued, so that the stream's worker makes none while the
// CUDA stream waits for it. The group runs as the rounds of its plan (src/exec/chunk_plan.h; one
// round, the ops as they are, where none runs through an arena). On the CUDA stream, round c's
// copies into its bay are followed by a point; the worker runs the round once the stream has
// reached that point and then releases it; the stream waits for that release before it copies the
// round's results out. The copies in and the points go on one stream forked from the CUDA stream,
// the waits and copies out on a second, so that both copy engines work; round c + kBays's copies in
// wait for round c's copies out, which free its bay, and the CUDA stream joins both at the end:
//   in:  in(0) P(0) in(1) P(1) in(2) P(2) [bay 0 freed] in(3) P(3) [bay 1 freed] in(4) P(4) ...
//   out: W(0) out(0) [bay 0 freed] W(1) out(1) [bay 1 freed] ... W(n-1) out(n-1)
// A group with nothing to copy on the GPU puts its point and wait on the CUDA stream itself.
// Rows in host memory are copied by the worker, at their round.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/device/cuda_stream_binding.h"
#include "src/exec/chunk_plan.h"
#include "src/op.h"

namespace slimeccl {

class QueuedRounds {
 public:
  // Plans `ops` (in the order they run) and queues their points and device copies on `stream`.
  // *out stays null where the group cannot run so, and must run on the calling thread: an op on
  // device memory that no pinned arena stages (or that the net module reaches on the device), a
  // PreMulSum scalar in device memory, a producer's gate, or a round larger than its bays. Where
  // queuing fails part way, the error is returned and *out still holds the group: the stream may
  // wait for points already queued, which the worker releases at the group's turn (run() then
  // returns the error and runs nothing).
  // The ops are moved from `ops` where *out is set.
  static slimecclResult_t queue(std::vector<OpRecord>& ops, CudaStreamBinding& stream,
                                std::unique_ptr<QueuedRounds>* out);
  QueuedRounds(const QueuedRounds&) = delete;
  QueuedRounds& operator=(const QueuedRounds&) = delete;

  const std::vector<OpRecord>& ops() const { return ops_; }
  // On the worker: runs each round once the stream has reached it. Whatever happens, every point of
  // the group is released when it returns.
  slimecclResult_t run(const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound);

 private:
  QueuedRounds(std::vector<OpRecord> ops, CudaStreamBinding& stream);
  bool copiesOnDevice() const;
  slimecclResult_t queueOnStream();
  slimecclResult_t queueCopiesIn(size_t c, CudaStreamBinding::Lane lane);
  slimecclResult_t queueCopiesOut(size_t c, CudaStreamBinding::Lane lane);

  std::vector<OpRecord> ops_;  // what the plan points into
  CudaStreamBinding& stream_;
  ChunkPlan plan_;
  std::vector<ChunkRound> rounds_;
  std::vector<uint32_t> points_;  // each round's, as queued
  slimecclResult_t failed_ = slimecclSuccess;
  std::string failure_;
};

}  // namespace slimeccl
