// Host streams: a worker thread per stream runs queued op groups in order while the caller goes on.
// A stream made from a CUDA stream also keeps that stream's order (src/device/cuda_stream_binding.h):
// a group is queued there with its device copies (src/exec/queued_rounds.h), or, where it cannot
// be, runs on the calling thread once the CUDA stream's earlier work is done.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/cuda_stream_binding.h"
#include "src/exec/queued_rounds.h"
#include "src/op.h"

namespace slimeccl {

// One group of ops on a stream's queue.
struct QueuedGroup {
  std::vector<OpRecord> ops;             // on a host stream
  std::unique_ptr<QueuedRounds> rounds;  // on a CUDA-ordered stream: the ops, queued there too
  const std::vector<OpRecord>& opsOf() const { return rounds ? rounds->ops() : ops; }
};

}  // namespace slimeccl

struct slimecclStream {
  std::thread worker;
  std::mutex enqueueMutex;          // callers queuing groups, one at a time
  std::mutex mutex;                 // the queue and the state below, shared with the worker
  std::condition_variable wake;     // work arrived or stop
  std::condition_variable drained;  // queue empty and nothing running
  std::deque<slimeccl::QueuedGroup> queue;
  bool running = false;
  bool stopping = false;
  slimecclResult_t error = slimecclSuccess;  // the first error; sticky
  std::string errorText;
  std::unique_ptr<slimeccl::CudaStreamBinding> cuda;  // slimecclStreamCreateFromCuda
};

namespace slimeccl {

slimecclResult_t streamCreate(slimecclStream** out);
// A stream that keeps the order of the CUDA stream `cudaStream` (a cudaStream_t).
slimecclResult_t streamCreateFromCuda(void* cudaStream, slimecclStream** out);
// A host stream's group. Takes ownership of ops (their comms' pending counts were raised by the
// caller, and are lowered once they have run).
slimecclResult_t streamEnqueue(slimecclStream* stream, std::vector<OpRecord> ops);
// A CUDA-ordered stream's part of a call or group: queued there with its device copies
// (src/exec/queued_rounds.h), *queued true, or left in `ops`, *queued false, for streamsRunHere.
slimecclResult_t streamEnqueueCuda(slimecclStream* stream, std::vector<OpRecord>& ops, bool* queued);
// Runs the parts of a call or group that their CUDA-ordered streams could not take, together on
// the calling thread (one thread may drive several ranks), as a blocking call, once everything
// queued before on each stream (its worker's groups, its CUDA stream's work) is done.
slimecclResult_t streamsRunHere(std::vector<std::pair<slimecclStream*, std::vector<OpRecord>>>& parts);
slimecclResult_t streamSynchronize(slimecclStream* stream);
slimecclResult_t streamQuery(slimecclStream* stream);
// Whether `stream` was made by streamCreate or streamCreateFromCuda and not destroyed since; safe
// on any value, since it never reads through it.
bool streamIsLive(const slimecclStream* stream);
void streamDestroy(slimecclStream* stream);

}  // namespace slimeccl
