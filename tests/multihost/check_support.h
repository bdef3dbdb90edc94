// What every check inside a rank needs: which rank this is, and how a failure ends the process.
#pragma once

#include <slimeccl.h>

#include <cstdint>
#include <string>

namespace multihost {

// A communicator together with this process's place in it.
struct CommView {
  slimecclComm_t comm;
  int rank;
  int nranks;
};

// The layout slimeccl-run hands to each rank through its environment.
struct LaunchLayout {
  int rank;
  int nranks;
  int ranksPerHost;
};

// Reads SLIMECCL_RANK, SLIMECCL_NRANKS and SLIMECCL_LOCAL_NRANKS; fails when one is missing or bad.
LaunchLayout layoutFromEnv();

// A fresh seed for each checked call. Every rank makes the same calls in the same order, so all
// ranks get the same seed for a call, and data left over from an earlier call never matches.
uint64_t nextCallSeed();

// Prints "multihost_check rank R: FAILED: <what>" and exits with status 1.
[[noreturn]] void fail(const std::string& what);

// Fails naming the call, the result and the library's last error (of comm, or of the thread when NULL).
void requireSuccess(slimecclResult_t rc, const char* call, slimecclComm_t comm);

}  // namespace multihost

#define REQUIRE_SUCCESS(call, comm) ::multihost::requireSuccess((call), #call, (comm))
