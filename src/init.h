// Creating communicators: from a unique id (through the root) and by splitting a parent.
#pragma once

#include "include/slimeccl.h"
#include "src/bootstrap/unique_id.h"

namespace slimeccl {

// A fresh id with a running root on SLIMECCL_SOCKET_IFNAME (ignores SLIMECCL_COMM_ID).
slimecclResult_t makeLocalUniqueId(UniqueIdContents* out);
// Validates a user config; nullptr is fine.
slimecclResult_t checkConfig(const slimecclConfig_t* config, const char* opName);
slimecclResult_t commInitRank(slimecclComm** out, int nranks, const UniqueIdContents& id, int rank,
                              const slimecclConfig_t* config);
// color < 0 (SLIMECCL_SPLIT_NOCOLOR): takes part but gets no comm (*out = nullptr).
// refusal != success: this rank's call was refused by a local check (its sentence is the thread's
// error); the rank still takes part, so that every rank fails at once.
slimecclResult_t commSplit(slimecclComm* parent, int color, int key, slimecclComm** out, const slimecclConfig_t* config,
                           slimecclResult_t refusal);

}  // namespace slimeccl
