// The alpha-beta time of a collective: its schedules played out in time, so the time is that of
// the critical path through their dependencies and messages. The model:
//  - a message of b bytes occupies its sender for alpha + b / bandwidth; a rank sends one message
//    at a time, in the order its sends become ready (all they wait for is complete);
//  - a receive completes once it is ready and its message has been sent;
//  - local copies, reductions and scaling cost nothing.
// The time is when the last step of any rank completes. The executor's chunk pipelining (a
// forwarded block leaves before all of it has arrived) is not modelled: every message is sent
// whole, which gives each algorithm its textbook cost, e.g. (N-1)(alpha + B/bandwidth) for ring
// AllGather.
#pragma once

#include <cstdint>
#include <string>

#include "tools/slimeccl-sim/schedule_graph.h"

namespace slimeccl::sim {

struct CostModel {
  double alphaMicroseconds = 5.0;
  double gigabytesPerSecond = 12.5;  // 1e9 bytes per second; beta is its inverse
};

double messageMicroseconds(const CostModel& cost, uint64_t bytes);

// Returns false with *error set when some steps can never run (the schedules deadlock). The graph's
// messages must be matched.
bool alphaBetaMicroseconds(const ScheduleGraph& graph, const CostModel& cost, double* microseconds, std::string* error);

}  // namespace slimeccl::sim
