// Ring AllGather (docs/algorithms.md): in step s a rank sends block (rank - s) to its next rank and
// receives block (rank - s - 1) from its previous rank; a block received in step s is the one sent
// in step s + 1, so the executor forwards it chunk by chunk as it lands.
#pragma once

#include "algorithms/schedule.h"

namespace slimeccl {

// blockBytes: the bytes each rank contributes. inPlace: the rank's block is already at
// recv[rank * blockBytes] (NCCL's in-place AllGather). Other algorithms reuse it on sub-rings.
Schedule allgatherRing(int nranks, int rank, size_t blockBytes, bool inPlace);

}  // namespace slimeccl
