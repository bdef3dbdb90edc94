// Rank side of init: reach the root, prove the secret, publish this rank's info, get the table.
#pragma once

#include <atomic>
#include <vector>

#include "include/slimeccl.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"
#include "src/base/sys/time.h"

namespace slimeccl {

slimecclResult_t joinThroughRoot(const UniqueIdContents& id, int nranks, int rank, int64_t timeoutMs,
                                 const RankInfo& mine, std::vector<RankInfo>* table);

}  // namespace slimeccl
