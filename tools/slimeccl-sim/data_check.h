// Runs every rank's schedule through the simulator (algorithms/simulator.h) on real buffers and
// compares each rank's receive buffer with the expected result.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "tools/slimeccl-sim/sim_call.h"

namespace slimeccl::sim {

struct DataCheck {
  SimulationResult simulation;  // when !simulation.ok, the run stopped and simulation.error says why
  size_t wrongElements = 0;     // over all ranks
  std::string firstWrong;       // "rank R element I", empty when nothing is wrong
};

// Send and receive bytes of all ranks together: what checkData allocates, besides scratch.
size_t dataCheckBytes(const SimCall& call);

// schedules[r] is rank r's schedule for `call`.
DataCheck checkData(const SimCall& call, const std::vector<Schedule>& schedules);

}  // namespace slimeccl::sim
