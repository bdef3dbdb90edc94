// Runs the schedules of all ranks on in-memory buffers, with no network: messages between a pair
// of ranks are delivered in order, and a step runs once its inputs are there. Tests use it to
// check every algorithm at rank counts no real run reaches.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace slimeccl {

struct RankBuffers {
  std::vector<char> send;
  std::vector<char> recv;
};

struct SimulationResult {
  bool ok = true;
  std::string error;        // why the run stopped (deadlock, size mismatch, bad range)
  size_t messages = 0;      // point-to-point messages in all
  std::vector<size_t> bytesSent;  // per rank
};

// buffers[r] must be sized for rank r's schedule; results land in buffers[r].recv.
SimulationResult simulate(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers);

}  // namespace slimeccl
