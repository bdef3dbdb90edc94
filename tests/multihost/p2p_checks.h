// Send/Recv inside slimecclGroupStart/End, checked element by element.
#pragma once

#include "check_support.h"

namespace multihost {

// Each rank sends to rank+1 and receives from rank-1, for sizes from 1 byte to 8 MiB.
void runRingExchange(const CommView& view);

// Every rank sends a message of its own size to every rank, itself included, in one group.
void runAllPairsExchange(const CommView& view);

}  // namespace multihost
