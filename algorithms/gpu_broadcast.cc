#include "algorithms/gpu_broadcast.h"

#include <algorithm>
#include <cstring>

namespace slimeccl {
namespace {

constexpr size_t kMinPieceBytes = size_t{8} << 20;
constexpr size_t kPieceAlign = 4096;

}  // namespace

const char* gpuBroadcastAlgoName(GpuBroadcastAlgo algo) {
  switch (algo) {
    case GpuBroadcastAlgo::Root: return "root";
    case GpuBroadcastAlgo::Relay: return "scatter_ag";
    case GpuBroadcastAlgo::Pull: return "scatter_pull";
  }
  return "?";
}

bool parseGpuBroadcastAlgo(const char* name, GpuBroadcastAlgo* out) {
  for (GpuBroadcastAlgo algo : kGpuBroadcastAlgos)
    if (std::strcmp(name, gpuBroadcastAlgoName(algo)) == 0) {
      *out = algo;
      return true;
    }
  return false;
}

bool gpuBroadcastAlgoFits(GpuBroadcastAlgo algo, int nranks) { return algo == GpuBroadcastAlgo::Root || nranks >= 3; }

PullShare pullShare(size_t count, size_t typeBytes, int nranks, int holder) {
  const size_t holders = static_cast<size_t>(std::max(nranks - 1, 1));
  const size_t perPiece = kPieceAlign / typeBytes;
  const size_t per = ((count + holders - 1) / holders + perPiece - 1) / perPiece * perPiece;
  const size_t offset = std::min(count, static_cast<size_t>(holder) * per);
  return {offset, std::min(count, offset + per) - offset};
}

int relayRounds(size_t bytes, int nranks) {
  const size_t holders = static_cast<size_t>(std::max(nranks - 1, 1));
  const size_t fit = bytes / (kMinPieceBytes * holders);
  return static_cast<int>(std::clamp<size_t>(fit, 1, kRelayMaxRounds));
}

RelayPiece relayPiece(size_t bytes, int nranks, int rounds, int round, int holder) {
  const size_t pieces = static_cast<size_t>(rounds) * static_cast<size_t>(std::max(nranks - 1, 1));
  const size_t per = (bytes / pieces + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
  const size_t index = static_cast<size_t>(round) * static_cast<size_t>(std::max(nranks - 1, 1)) + holder;
  const size_t offset = std::min(bytes, index * per);
  const size_t end = index + 1 == pieces ? bytes : std::min(bytes, offset + per);
  return {offset, end - offset};
}

}  // namespace slimeccl
