// Host streams: a worker thread per stream runs queued op groups in order while the caller goes on.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "include/slimeccl.h"
#include "src/op.h"

struct slimecclStream {
  uint32_t magic;
  std::thread worker;
  std::mutex mutex;
  std::condition_variable wake;     // work arrived or stop
  std::condition_variable drained;  // queue empty and nothing running
  std::deque<std::vector<slimeccl::OpRecord>> queue;
  bool running = false;
  bool stopping = false;
  slimecclResult_t error = slimecclSuccess;  // the first error; sticky
  std::string errorText;
};

namespace slimeccl {

constexpr uint32_t kStreamMagic = 0x53545245;  // "STRE"

slimecclResult_t streamCreate(slimecclStream** out);
// Takes ownership of ops (their comms' pending counts were raised by the caller).
slimecclResult_t streamEnqueue(slimecclStream* stream, std::vector<OpRecord> ops);
slimecclResult_t streamSynchronize(slimecclStream* stream);
slimecclResult_t streamQuery(slimecclStream* stream);
void streamDestroy(slimecclStream* stream);

}  // namespace slimeccl
