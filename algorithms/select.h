// Chooses and builds the schedule of one op for one rank. The tuner of later algorithms plugs in
// here; for now AllGather runs the ring and P2P is a single step.
#pragma once

#include "algorithms/schedule.h"
#include "src/op.h"

namespace slimeccl {

struct ScheduleRequest {
  Coll coll;
  size_t bytes;  // Send/Recv: the message; AllGather: one rank's block
  int peer;
  bool inPlace;
  int nranks;
  int rank;
};

Schedule buildSchedule(const ScheduleRequest& request);

}  // namespace slimeccl
