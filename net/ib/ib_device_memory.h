// GPUDirect RDMA on the verbs side: whether an opened device takes device memory, by dmabuf (a
// registration probe that the kernel driver answers) or through the kernel's peer memory client
// (nvidia-peermem, which lets ibv_reg_mr take a GPU address).
#pragma once

#include <string>

#include "net/ib/ib_device.h"
#include "net/net.h"

namespace slimeccl {

// Asks the device's driver whether it registers dmabufs: a registration of no memory from no file
// fails with EOPNOTSUPP (or EPROTONOSUPPORT) where it does not, with another error where it does.
// probeDmabuf returns the errno the probe left; DmabufProbe lets tests stand in for it.
using DmabufProbe = int (*)(ibv_pd* pd);
int probeDmabuf(ibv_pd* pd);
bool dmabufProbeSaysSupported(int probeErrno);

// Whether a peer memory client for NVIDIA GPUs is loaded: the files it shows under `sysRoot`
// ("/sys" on the machine).
bool peerMemoryClientLoaded(const std::string& sysRoot = "/sys");

// What the device serving a rank takes, in a sentence that names it and what was found.
DeviceMemorySupport ibDeviceMemorySupport(const IbDevice& dev, DmabufProbe probe = probeDmabuf,
                                          const std::string& sysRoot = "/sys");

}  // namespace slimeccl
