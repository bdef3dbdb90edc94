#include "algorithms/schedule_builder.h"

namespace slimeccl {

int addStep(Schedule& s, const Step& step) {
  s.steps.push_back(step);
  return static_cast<int>(s.steps.size()) - 1;
}

int addTransfer(Schedule& s, const Step& step) {
  const BufferRange& data = step.kind == StepKind::Send ? step.src : step.dst;
  return data.bytes == 0 ? -1 : addStep(s, step);
}

BufferRange wholeVector(const ScheduleRequest& r, BufferId buffer) {
  return BufferRange{buffer, 0, r.count * r.typeBytes};
}

Schedule singleRankReduction(const ScheduleRequest& r) {
  Schedule s;
  const BufferRange out = wholeVector(r, BufferId::Recv);
  int result = -1;
  if (!r.inPlace) result = addStep(s, Step{StepKind::Copy, -1, wholeVector(r, BufferId::Send), out});
  if (r.op == slimecclAvg) addStep(s, Step{StepKind::Scale, -1, {}, out, result});
  return s;
}

}  // namespace slimeccl
