#include "src/device/gpu_broadcasts.h"

#include <string>

#include "algorithms/gpu_tuning.h"
#include "src/comm.h"
#include "src/device/reduce_kernel.h"

namespace slimeccl {
namespace {

// scatter_pull writes every rank's output from one kernel step (a source and a destination per rank).
bool pullServes(int nranks, const std::vector<PostContents>& posts) {
  if (nranks > kReduceMaxRanks) return false;
  for (const PostContents& post : posts)
    if (post.reduceKernels == 0) return false;
  return true;
}

}  // namespace

#ifdef SLIMECCL_HAVE_CUDA

bool broadcastOnGpu(GpuPeers& peers, const OpRecord& op, PostContents* post) {
  std::string why;
  post->inPlace = isInPlace(op) ? 1 : 0;
  post->reduceKernels = peers.reduceUsable() ? 1 : 0;
  GpuBroadcastAlgo forced;
  const std::string& name = op.comm->params.gpuBroadcastAlgo;
  post->forcedAlgo =
      !name.empty() && parseGpuBroadcastAlgo(name.c_str(), &forced) ? static_cast<uint8_t>(forced) : kNoForcedAlgo;
  const Region read = readRegion(op), written = writtenRegion(op);
  if (!peers.onThisGpu(read) || !peers.exportBuffer(written.data, written.bytes, &post->recv, &why)) return false;
  return op.comm->rank != op.root || peers.exportBuffer(read.data, read.bytes, &post->send, &why);
}

#endif

GpuBroadcastAlgo gpuBroadcastAlgoFor(const OpRecord& op, const std::vector<PostContents>& posts) {
  const int n = op.comm->nranks;
  auto serves = [&](GpuBroadcastAlgo algo) {
    return gpuBroadcastAlgoFits(algo, n) && (algo != GpuBroadcastAlgo::Pull || pullServes(n, posts));
  };
  const uint8_t forced = posts[0].forcedAlgo;
  if (forced != kNoForcedAlgo && serves(static_cast<GpuBroadcastAlgo>(forced)))
    return static_cast<GpuBroadcastAlgo>(forced);
  const GpuBroadcastAlgo tuned = tuneGpuBroadcast(op.bytes(), n);
  return serves(tuned) ? tuned : GpuBroadcastAlgo::Root;
}

}  // namespace slimeccl
