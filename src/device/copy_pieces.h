// How a copy within one GPU is cut into pieces, each queued as its own copy: one large copy slows
// the SMs' work beside it far more than the same bytes in pieces (docs/performance.md, "Beside a
// GEMM"; SLIMECCL_GPU_LOCAL_COPY_PIECE_BYTES). No CUDA here: host code and tests use it.
#pragma once

#include <cstddef>
#include <vector>

namespace slimeccl {

struct CopyPiece {
  size_t offset = 0;
  size_t bytes = 0;
};

// [0, bytes) in order as pieces of at most `most` bytes (0: one piece); one empty piece for 0 bytes.
std::vector<CopyPiece> copyPieces(size_t bytes, size_t most);

}  // namespace slimeccl
