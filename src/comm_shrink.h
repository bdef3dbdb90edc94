// slimecclCommShrink (NCCL's ncclCommShrink): the ranks that stay make a communicator without the
// excluded ones, which take no part. The first rank that stays starts a bootstrap root whose secret
// it derives from the old comm's and a random salt, and sends the root's address and the salt,
// never a secret, to the others over the old comm; each derives the same secret.
#pragma once

#include "include/slimeccl.h"

namespace slimeccl {

slimecclResult_t commShrink(slimecclComm* comm, const int* excluded, int excludedCount, slimecclComm** out,
                            const slimecclConfig_t* config);

}  // namespace slimeccl
