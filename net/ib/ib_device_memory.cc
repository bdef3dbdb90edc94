#include "net/ib/ib_device_memory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace slimeccl {

int probeDmabuf(ibv_pd* pd) {
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
  const int err = errno;
  if (mr != nullptr) ibv_dereg_mr(mr);
  return err;
}

bool dmabufProbeSaysSupported(int probeErrno) { return probeErrno != EOPNOTSUPP && probeErrno != EPROTONOSUPPORT; }

bool peerMemoryClientLoaded(const std::string& sysRoot) {
  for (const char* file : {"/kernel/mm/memory_peers/nv_mem/version", "/kernel/mm/memory_peers/nvidia-peermem/version",
                           "/module/nvidia_peermem/version"})
    if (access((sysRoot + file).c_str(), F_OK) == 0) return true;
  return false;
}

DeviceMemorySupport ibDeviceMemorySupport(const IbDevice& dev, DmabufProbe probe, const std::string& sysRoot) {
  DeviceMemorySupport support;
  support.device = dev.port.device;
  const int probeErrno = probe(dev.pd);
  support.dmabuf = dmabufProbeSaysSupported(probeErrno);
  support.peerMemory = peerMemoryClientLoaded(sysRoot);
  const std::string dmabuf = support.dmabuf ? fmt::format("{} registers dmabufs", support.device)
                                            : fmt::format("{} refuses dmabuf registrations (ibv_reg_dmabuf_mr: {})",
                                                          support.device, strerror(probeErrno));
  const char* peer = support.peerMemory ? "a peer memory client for NVIDIA GPUs (nvidia-peermem) is loaded"
                                        : "no peer memory client for NVIDIA GPUs (nvidia-peermem) is loaded";
  support.why = fmt::format("{}; {}", dmabuf, peer);
  return support;
}

}  // namespace slimeccl
