// The figures of one simulated call: every rank's schedule built, its traffic counted and its
// alpha-beta time computed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "tools/slimeccl-sim/alpha_beta.h"
#include "tools/slimeccl-sim/sim_call.h"

namespace slimeccl::sim {

struct CallFigures {
  bool ok = false;
  std::string error;  // why the schedules cannot run, when !ok
  size_t minSends = 0;
  size_t maxSends = 0;
  size_t minBytesSent = 0;
  size_t maxBytesSent = 0;
  size_t messages = 0;   // over all ranks
  size_t bytesSent = 0;  // over all ranks
  size_t steps = 0;      // over all ranks
  double microseconds = 0.0;
};

// When keptSchedules is not null, every rank's schedule is left there (for a data check);
// otherwise each is dropped once counted.
CallFigures measureCall(const SimCall& call, const CostModel& cost, std::vector<Schedule>* keptSchedules);

}  // namespace slimeccl::sim
