// Ranks as forked processes of the test, each running the same body on its own communicator and
// reporting the body's result and its comm's last error sentence back to the test.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "slimeccl.h"

namespace slimeccl_test {

struct RankReport {
  bool reported = false;  // false: the rank died or hung past the deadline
  slimecclResult_t result = slimecclSuccess;
  std::string error;
  double seconds = 0;  // how long the body took
};

using RankBody = std::function<slimecclResult_t(int rank, slimecclComm_t comm)>;
// Runs in a rank's process before its init (to set its environment).
using RankSetup = std::function<void(int rank)>;

// Forks nranks ranks; rank 0 makes the unique id and hands it to the others. A rank that cannot
// join reports its init error ("init failed: ..."). A rank that has not reported after
// deadlineSeconds is killed (its report stays unreported).
std::vector<RankReport> runForkedRanks(int nranks, const RankBody& body, int deadlineSeconds = 60,
                                       const RankSetup& setup = {});

}  // namespace slimeccl_test
