#include "src/device/copy_pieces.h"

#include <algorithm>

namespace slimeccl {

std::vector<CopyPiece> copyPieces(size_t bytes, size_t most) {
  if (most == 0 || bytes <= most) return {CopyPiece{0, bytes}};
  std::vector<CopyPiece> pieces;
  for (size_t at = 0; at < bytes; at += most) pieces.push_back({at, std::min(most, bytes - at)});
  return pieces;
}

}  // namespace slimeccl
