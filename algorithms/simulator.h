// Runs the schedules of all ranks on in-memory buffers, with no network: messages between a pair
// of ranks are delivered in order, a step runs once its dependency has run, and local steps run
// in list order (the rules of algorithms/schedule.h). Tests use it to check every algorithm at
// rank counts no real run reaches; the slimeccl-sim tool uses its counts.
#pragma once

#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "include/slimeccl.h"

namespace slimeccl {

struct RankBuffers {
  std::vector<char> send;
  std::vector<char> recv;
  std::vector<char> scratch;  // sized by the simulator from Schedule::scratchBytes
};

struct SimulationOptions {
  slimecclDataType_t type = slimecclInt8;  // for reductions and Scale
  slimecclRedOp_t op = slimecclSum;
};

struct SimulationResult {
  bool ok = true;
  std::string error;              // why the run stopped (deadlock, size mismatch, bad range)
  size_t messages = 0;            // point-to-point messages in all
  std::vector<size_t> bytesSent;  // per rank
  std::vector<size_t> rounds;     // per rank: sends it makes (a proxy for latency terms)
};

// buffers[r].send/recv must be sized for rank r's schedule; results land in buffers[r].recv.
SimulationResult simulate(const std::vector<Schedule>& schedules, std::vector<RankBuffers>& buffers,
                          const SimulationOptions& options = {});

}  // namespace slimeccl
