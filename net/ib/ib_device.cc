#include "net/ib/ib_device.h"

#include <arpa/inet.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "net/ib/ib_params.h"
#include "net/ib/mr_cache.h"
#include "src/base/error.h"
#include "src/base/log.h"
#include "topo/hca_filter.h"

namespace slimeccl {
namespace {

bool isIpv4Mapped(const ibv_gid& gid) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(gid.raw, prefix, sizeof(prefix)) == 0;
}

bool isZero(const ibv_gid& gid) {
  for (uint8_t b : gid.raw)
    if (b != 0) return false;
  return true;
}

bool isLinkLocal(const ibv_gid& gid) { return gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80; }

std::string gidText(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

// Per-lane rate times lane count, from the port attributes' codes.
int portSpeedMbps(uint8_t speed, uint8_t width) {
  int lane = 0;
  switch (speed) {
    case 1: lane = 2500; break;
    case 2: lane = 5000; break;
    case 4:
    case 8: lane = 10000; break;
    case 16: lane = 14000; break;
    case 32: lane = 25000; break;
    case 64: lane = 50000; break;
    case 128: lane = 100000; break;
    default: break;
  }
  int lanes = width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8 : width == 8 ? 12 : width == 16 ? 2 : 0;
  return lane * lanes;
}

std::vector<GidEntry> readGidTable(ibv_context* context, int port, int tableLength) {
  std::vector<GidEntry> table;
  // One call returns the valid rows of every port (rxe's tables have 1024 rows, mostly empty);
  // row by row is the fallback.
  std::vector<ibv_gid_entry> rows(static_cast<size_t>(tableLength) * 8);
  ssize_t n = ibv_query_gid_table(context, rows.data(), rows.size(), 0);
  if (n >= 0) {
    for (ssize_t i = 0; i < n; ++i)
      if (static_cast<int>(rows[i].port_num) == port && !isZero(rows[i].gid))
        table.push_back(GidEntry{static_cast<int>(rows[i].gid_index), rows[i].gid, static_cast<int>(rows[i].gid_type)});
    return table;
  }
  for (int i = 0; i < tableLength; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, port, i, &entry, 0) != 0 || isZero(entry.gid)) continue;
    table.push_back(GidEntry{i, entry.gid, static_cast<int>(entry.gid_type)});
  }
  return table;
}

// Fills the address part of a usable port; false (with a reason) when there is no address.
bool choosePortAddress(ibv_context* context, const ibv_port_attr& attr, IbPort* p, std::string* reason) {
  p->linkLayer = attr.link_layer;
  p->lid = attr.lid;
  std::vector<GidEntry> table = readGidTable(context, p->port, attr.gid_tbl_len);
  int forced = ibParams().gidIndex;
  if (forced >= 0) {
    for (const GidEntry& e : table)
      if (e.index == forced) {
        p->gidIndex = forced;
        p->gid = e.gid;
        return true;
      }
    *reason = fmt::format("{} port {}: SLIMECCL_IB_GID_INDEX={} is not in its GID table", p->device, p->port, forced);
    return false;
  }
  if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    // InfiniBand routes by LID; GID 0 is kept for logs.
    p->gidIndex = 0;
    if (!table.empty()) p->gid = table.front().gid;
    return true;
  }
  int index = chooseRoceGid(table);
  if (index < 0) {
    *reason = fmt::format("{} port {}: RoCE port without a GID (no IP address on its netdev?)", p->device, p->port);
    return false;
  }
  for (const GidEntry& e : table)
    if (e.index == index) p->gid = e.gid;
  p->gidIndex = index;
  return true;
}

struct Discovery {
  std::vector<IbPort> ports;
  std::string whyNone;
};

Discovery discover() {
  Discovery d;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr || count == 0) {
    d.whyNone = "no RDMA verbs device on this machine";
    if (list != nullptr) ibv_free_device_list(list);
    return d;
  }
  HcaFilter filter = parseHcaFilter(ibParams().hca);
  std::vector<std::string> seen;
  for (int i = 0; i < count; ++i) {
    std::string name = ibv_get_device_name(list[i]);
    ibv_context* context = ibv_open_device(list[i]);
    if (context == nullptr) {
      seen.push_back(name + " (cannot be opened: " + strerror(errno) + ")");
      continue;
    }
    ibv_device_attr devAttr{};
    int ports = ibv_query_device(context, &devAttr) == 0 ? devAttr.phys_port_cnt : 0;
    for (int port = 1; port <= ports; ++port) {
      ibv_port_attr attr{};
      if (ibv_query_port(context, port, &attr) != 0) continue;
      std::string state = ibv_port_state_str(attr.state);
      if (!hcaFilterAccepts(filter, name, port)) {
        seen.push_back(fmt::format("{} port {} ({}, not selected by SLIMECCL_IB_HCA)", name, port, state));
        continue;
      }
      if (attr.state != IBV_PORT_ACTIVE) {
        seen.push_back(fmt::format("{} port {} ({})", name, port, state));
        continue;
      }
      IbPort p;
      p.device = name;
      p.port = port;
      p.activeMtu = attr.active_mtu;
      p.speedMbps = portSpeedMbps(attr.active_speed, attr.active_width);
      std::string reason;
      if (!choosePortAddress(context, attr, &p, &reason)) {
        seen.push_back(reason);
        continue;
      }
      d.ports.push_back(p);
    }
    ibv_close_device(context);
  }
  ibv_free_device_list(list);
  if (d.ports.empty()) d.whyNone = "no usable port among: " + fmt::format("{}", fmt::join(seen, "; "));
  for (const IbPort& p : d.ports) SLIMECCL_INFO(kLogNet, -1, "ib: usable {}", p.describe());
  return d;
}

// The usable port the placement names (topology's: closest to the local rank's GPU, else to its
// CPUs, local ranks spread over equally close NICs); else port (rank mod count), which spreads
// ranks that share a process or that topology cannot place (virtual devices have no PCI path).
size_t portIndexForRank(int rank, const NetPlacement& placement, const std::vector<IbPort>& ports) {
  const std::string device = ports.size() > 1 ? placement.placedDevice(rank, "ib") : std::string();
  if (!device.empty())
    for (size_t i = 0; i < ports.size(); ++i)
      if (device == ports[i].device || device == fmt::format("{}:{}", ports[i].device, ports[i].port)) return i;
  return static_cast<size_t>(rank < 0 ? 0 : rank) % ports.size();
}

struct OpenDevices {
  std::mutex mutex;
  pid_t pid = 0;
  std::vector<IbDevice*> devices;  // by usable port index; nullptr until opened
};

}  // namespace

std::string IbPort::describe() const {
  const char* layer = linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand";
  std::string address = linkLayer == IBV_LINK_LAYER_ETHERNET ? fmt::format("GID {} {}", gidIndex, gidText(gid))
                                                             : fmt::format("LID {}", lid);
  return fmt::format("{} port {} ({}, {}, MTU {}, {} Mb/s)", device, port, layer, address,
                     128 << static_cast<int>(activeMtu), speedMbps);
}

int chooseRoceGid(const std::vector<GidEntry>& table) {
  auto first = [&](auto wanted) {
    for (const GidEntry& e : table)
      if (wanted(e)) return e.index;
    return -1;
  };
  int index = first([](const GidEntry& e) { return e.type == IBV_GID_TYPE_ROCE_V2 && isIpv4Mapped(e.gid); });
  if (index < 0) index = first([](const GidEntry& e) { return e.type == IBV_GID_TYPE_ROCE_V2 && !isLinkLocal(e.gid); });
  if (index < 0) index = first([](const GidEntry& e) { return e.type == IBV_GID_TYPE_ROCE_V2; });
  if (index < 0) index = first([](const GidEntry& e) { return e.type == IBV_GID_TYPE_ROCE_V1; });
  return index;
}

const std::vector<IbPort>& ibUsablePorts(std::string* whyNone) {
  static const Discovery discovery = discover();
  if (whyNone != nullptr) *whyNone = discovery.whyNone;
  return discovery.ports;
}

slimecclResult_t ibDeviceForRank(int rank, const NetPlacement& placement, IbDevice** out) {
  std::string whyNone;
  const std::vector<IbPort>& ports = ibUsablePorts(&whyNone);
  if (ports.empty()) return fail(slimecclSystemError, "ib: {}", whyNone);
  static OpenDevices open;
  std::lock_guard<std::mutex> lock(open.mutex);
  if (open.pid != getpid()) {
    // After fork the parent's verbs objects are unusable here: forget them (not ours to free).
    open.pid = getpid();
    open.devices.assign(ports.size(), nullptr);
  }
  size_t index = portIndexForRank(rank, placement, ports);
  if (open.devices[index] != nullptr) {
    *out = open.devices[index];
    return slimecclSuccess;
  }
  const IbPort& port = ports[index];
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  ibv_context* context = nullptr;
  for (int i = 0; list != nullptr && i < count && context == nullptr; ++i)
    if (port.device == ibv_get_device_name(list[i])) context = ibv_open_device(list[i]);
  if (list != nullptr) ibv_free_device_list(list);
  if (context == nullptr)
    return fail(slimecclSystemError, "ib: cannot open device {}: {}", port.device, strerror(errno));
  ibv_pd* pd = ibv_alloc_pd(context);
  if (pd == nullptr) {
    int err = errno;
    ibv_close_device(context);
    return fail(slimecclSystemError, "ib: cannot allocate a protection domain on {}: {}", port.device, strerror(err));
  }
  auto* device = new IbDevice{port, context, pd, nullptr};
  device->mrCache = new MrCache(std::make_unique<VerbsRegistrar>(pd), ibParams().mrCacheEntries);
  open.devices[index] = device;
  SLIMECCL_INFO(kLogNet, rank, "ib: rank {} uses {}", rank, port.describe());
  *out = device;
  return slimecclSuccess;
}

}  // namespace slimeccl
