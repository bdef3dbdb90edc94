#include "src/device/op_handshake.h"

#include <algorithm>

namespace slimeccl {

Handshake exchangeOf(const GpuPeers& peers, FlagKind kind, int rank, int nranks) {
  Handshake h;
  for (int p = 0; p < nranks; ++p) {
    if (p == rank) continue;
    h.set.push_back(peers.peerFlag(kind, p));
    h.wait.push_back(peers.ownFlag(kind, p));
  }
  return h;
}

bool fitsKernel(const Handshake& h) { return std::max(h.set.size(), h.wait.size()) <= kSmCopyMaxFlags; }

SmCopyHandshake forKernel(const Handshake& h) {
  SmCopyHandshake k;
  for (const uint64_t flag : h.set) k.set[k.sets++] = flag;
  for (const uint64_t flag : h.wait) k.wait[k.waits++] = flag;
  return k;
}

}  // namespace slimeccl
