#include "algorithms/power_of_two_fold.h"

#include "algorithms/schedule_builder.h"

namespace slimeccl {

PowerOfTwoFold::PowerOfTwoFold(int nranks, int rank) : rank_(rank) {
  while (active_ * 2 <= nranks) active_ *= 2;
  extra_ = nranks - active_;
}

void addHandOver(Schedule& s, int rank, const BufferRange& input, const BufferRange& result) {
  const int sent = addStep(s, Step{StepKind::Send, rank - 1, input, {}});
  addStep(s, Step{StepKind::Recv, rank - 1, {}, result, sent});
}

}  // namespace slimeccl
