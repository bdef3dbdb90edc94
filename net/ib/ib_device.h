// Verbs device discovery (ports, link layer, speed, GIDs, SLIMECCL_IB_HCA) and the per-process
// open devices (context, protection domain, registration cache).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "net/net.h"

namespace slimeccl {

class MrCache;

// A usable (device, port): its state is ACTIVE and it has an address to reach it by.
struct IbPort {
  std::string device;
  int port = 1;
  int linkLayer = IBV_LINK_LAYER_UNSPECIFIED;
  ibv_mtu activeMtu = IBV_MTU_1024;
  uint16_t lid = 0;
  int gidIndex = 0;
  ibv_gid gid{};
  int speedMbps = 0;
  std::string describe() const;  // "rxe_a port 1 (RoCE v2, GID 1 ::ffff:10.77.0.1, 10000 Mb/s)"
};

// One row of a port's GID table, as discovery sees it.
struct GidEntry {
  int index;
  ibv_gid gid;
  int type;  // IBV_GID_TYPE_IB, IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2
};

// The GID index to use on a RoCE port: RoCE v2 with an IPv4-mapped address, then RoCE v2 with a
// global IPv6 address, then any RoCE v2, then RoCE v1; -1 when the table has nothing usable.
int chooseRoceGid(const std::vector<GidEntry>& table);

// The usable ports selected by SLIMECCL_IB_HCA, found once per process. When there is none,
// *whyNone (when given) says what discovery saw.
const std::vector<IbPort>& ibUsablePorts(std::string* whyNone = nullptr);

// An opened port: created on first use in each process (verbs objects do not survive fork).
struct IbDevice {
  IbPort port;
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  MrCache* mrCache = nullptr;
};

// The device that serves `rank`: the usable port `placement` places it on, else port (rank mod
// count); opened on first use.
slimecclResult_t ibDeviceForRank(int rank, const NetPlacement& placement, IbDevice** out);

}  // namespace slimeccl
