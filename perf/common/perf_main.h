// The main() of every perf tool: options, ranks, communicators, the run, the footer, the exit code.
#pragma once

#include "common/collective_test.h"

namespace slimeccl_perf {

// Returns 0 when every check passed, 1 when a result was wrong or the command line or environment
// was unusable; a failed slimeccl call exits with 1 on the spot.
int runPerfMain(int argc, char** argv, const CollectiveTest& test);

}  // namespace slimeccl_perf
