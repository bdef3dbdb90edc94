// The executor: runs plans (of one or several communicators) to completion over their links,
// making the links first when needed. Every wait is bounded by the comms' timeouts and abort.
#pragma once

#include <string>
#include <vector>

#include "src/exec/plan.h"

namespace slimeccl {

// Holds the executor locks of a set of comms for its scope, taken in address order so that two
// groups over the same comms cannot deadlock. `comms` (kept alive by the caller) is sorted and
// made unique. A comm's plan cache is used only under its lock.
class ExecLocks {
 public:
  explicit ExecLocks(std::vector<slimecclComm*>& comms);
  ~ExecLocks();
  ExecLocks(const ExecLocks&) = delete;
  ExecLocks& operator=(const ExecLocks&) = delete;

 private:
  const std::vector<slimecclComm*>& order_;
};

// Runs the plans; the caller holds the ExecLocks of `comms`, the plans' comms (each once). On
// failure every comm involved is marked failed with the sentence, and its links are dropped
// (their streams are out of step). Returns the first error.
slimecclResult_t runPlans(const std::vector<OpPlan*>& plans, const std::vector<slimecclComm*>& comms);
// Runs one plan the same way; the caller holds its comm's executor lock. A plan carried by the
// shared slots first spins on them alone, and becomes a run only if the spin ends before it does.
slimecclResult_t runPlan(OpPlan* plan);
// What a failed run does to each of its comms: marks it failed with the code and sentence and
// drops its links (their streams are out of step); a timeout prints its flight recorder first.
void failAfterRun(slimecclComm* comm, slimecclResult_t code, const std::string& cause);

}  // namespace slimeccl
