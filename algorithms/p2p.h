// Point-to-point calls as one-step schedules.
#pragma once

#include "algorithms/schedule.h"

namespace slimeccl {

inline Schedule sendSchedule(int peer, size_t bytes) {
  Schedule s;
  s.steps.push_back(Step{StepKind::Send, peer, BufferRange{BufferId::Send, 0, bytes}, {}});
  return s;
}

inline Schedule recvSchedule(int peer, size_t bytes) {
  Schedule s;
  s.steps.push_back(Step{StepKind::Recv, peer, {}, BufferRange{BufferId::Recv, 0, bytes}});
  return s;
}

}  // namespace slimeccl
