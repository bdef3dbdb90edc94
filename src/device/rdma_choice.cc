#include "src/device/rdma_choice.h"

#include <algorithm>

#include "src/device/gpu_rdma.h"
#include "src/base/error.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

// The PCI path between the GPU at `busId` and the NIC of verbs device `device`, where this
// machine's topology shows both on PCI.
bool pathBetween(const std::string& busId, const std::string& device, PciPath* out) {
  const TopoSummary* topo = nullptr;
  if (busId.empty() || device.empty() || systemTopology(&topo) != slimecclSuccess) {
    clearThreadError();
    return false;
  }
  const PciDevice* gpu = nullptr;
  for (const Gpu& g : topo->gpus)
    if (g.pci >= 0 && topo->pci[g.pci].busId == busId) gpu = &topo->pci[g.pci];
  const PciDevice* nic = nullptr;
  for (const Nic& n : topo->nics)
    if (n.pci >= 0 && std::find(n.verbs.begin(), n.verbs.end(), device) != n.verbs.end()) nic = &topo->pci[n.pci];
  if (gpu == nullptr || nic == nullptr) return false;
  *out = pciPath(*gpu, *nic);
  return true;
}

}  // namespace

slimecclResult_t chooseGdrForRank(int gpu, NetModule* module, const NetContext& ctx, const GdrSettings& settings,
                                  GdrChoice* out) {
  GdrFacts facts;
  if (!parseGdrSetting(settings.setting, &facts.setting))
    return fail(slimecclInvalidArgument, "rank {}: SLIMECCL_GDR='{}' is none of auto, on, off", ctx.rank,
                settings.setting);
  if (!settings.farthest.empty() && !parsePathClass(settings.farthest, &facts.farthest))
    return fail(slimecclInvalidArgument, "rank {}: SLIMECCL_GDR_LEVEL='{}' is none of PIX, PXB, PHB, NODE, SYS",
                ctx.rank, settings.farthest);
  // The GPU is asked only where the module's device takes device memory and the rank uses a GPU:
  // a comm of host memory touches no CUDA at init.
  if (facts.setting != GdrSetting::Off && module != nullptr) {
    facts.module = module->name();
    facts.nic = module->deviceMemorySupport(ctx);
    facts.gpuIndex = gpu;
    facts.gpuWhy = "the rank uses no GPU";
    if ((facts.nic.dmabuf || facts.nic.peerMemory) && gpu >= 0) {
      const GpuRdmaFacts gpuFacts = gpuRdmaFacts(gpu);
      facts.gpu = gpuFacts.present;
      facts.gpuWhy = gpuFacts.why;
      facts.gpuRdma = gpuFacts.rdma;
      facts.gpuDmabuf = gpuFacts.dmabuf;
      PciPath path;
      facts.pathKnown = pathBetween(gpuFacts.busId, facts.nic.device, &path);
      facts.path = path.pathClass;
    }
  }
  *out = chooseGdr(facts);
  return slimecclSuccess;
}

}  // namespace slimeccl
