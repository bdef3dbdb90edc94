#include "algorithms/select.h"

#include "algorithms/allgather_ring.h"

namespace slimeccl {

Schedule buildSchedule(const ScheduleRequest& r) {
  Schedule s;
  switch (r.coll) {
    case Coll::Send:
      s.steps.push_back(Step{StepKind::Send, r.peer, BufferRange{BufferId::Send, 0, r.bytes}, {}});
      break;
    case Coll::Recv:
      s.steps.push_back(Step{StepKind::Recv, r.peer, {}, BufferRange{BufferId::Recv, 0, r.bytes}});
      break;
    case Coll::AllGather:
      s = allgatherRing(r.nranks, r.rank, r.bytes, r.inPlace);
      break;
    default:
      break;
  }
  return s;
}

}  // namespace slimeccl
