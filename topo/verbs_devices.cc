#include "topo/verbs_devices.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <type_traits>

#ifdef SLIMECCL_HAVE_IB
#include <dlfcn.h>
#include <endian.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdlib.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_IB
namespace {

constexpr int kMaxGidsKept = 16;

// The libibverbs entry points used here; ibv_query_port is looked up by its exported name since
// the header turns it into an inline wrapper.
struct VerbsApi {
  ibv_device** (*getDeviceList)(int*);
  void (*freeDeviceList)(ibv_device**);
  const char* (*getDeviceName)(ibv_device*);
  ibv_context* (*openDevice)(ibv_device*);
  int (*closeDevice)(ibv_context*);
  int (*queryDevice)(ibv_context*, ibv_device_attr*);
  int (*queryPort)(ibv_context*, uint8_t, ibv_port_attr*);
  int (*queryGid)(ibv_context*, uint8_t, int, ibv_gid*);
};

// Loads libibverbs once per process; nullptr with *why when it is missing.
const VerbsApi* verbsApi(std::string* why) {
  static std::string error;
  static const VerbsApi* api = []() -> const VerbsApi* {
    void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = fmt::format("libibverbs.so.1 cannot be loaded: {}", dlerror());
      return nullptr;
    }
    static VerbsApi table;
    bool ok = true;
    auto bind = [&](auto** fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
      if (*fn == nullptr) {
        ok = false;
        error = fmt::format("libibverbs.so.1 lacks {}", name);
      }
    };
    bind(&table.getDeviceList, "ibv_get_device_list");
    bind(&table.freeDeviceList, "ibv_free_device_list");
    bind(&table.getDeviceName, "ibv_get_device_name");
    bind(&table.openDevice, "ibv_open_device");
    bind(&table.closeDevice, "ibv_close_device");
    bind(&table.queryDevice, "ibv_query_device");
    bind(&table.queryPort, "ibv_query_port");
    bind(&table.queryGid, "ibv_query_gid");
    return ok ? &table : nullptr;
  }();
  if (api == nullptr) *why = error;
  return api;
}

double laneGbps(uint8_t speed) {
  switch (speed) {
    case 1: return 2.5;
    case 2: return 5;
    case 4:
    case 8: return 10;
    case 16: return 14;
    case 32: return 25;
    case 64: return 50;
    case 128: return 100;
    default: return 0;
  }
}

int lanes(uint8_t width) {
  switch (width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The PCI function behind a device: the last element of its sysfs device link, when it is one.
std::string pciBusIdOf(const std::string& name) {
  char resolved[PATH_MAX];
  std::string link = "/sys/class/infiniband/" + name + "/device";
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  std::string last = path.substr(path.rfind('/') + 1);
  unsigned domain, bus, dev, func;
  if (sscanf(last.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &func) != 4) return "";
  return last;
}

std::string formatGid(const ibv_gid& gid) {
  std::string out;
  for (int i = 0; i < 16; i += 2) out += fmt::format("{}{:02x}{:02x}", i == 0 ? "" : ":", gid.raw[i], gid.raw[i + 1]);
  return out;
}

VerbsPort queryPort(const VerbsApi& api, ibv_context* ctx, const std::string& device, int number) {
  VerbsPort port;
  port.number = number;
  ibv_port_attr attr;
  memset(&attr, 0, sizeof(attr));
  if (api.queryPort(ctx, static_cast<uint8_t>(number), &attr) != 0) return port;
  port.state = attr.state;
  port.linkLayer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  port.gbps = laneGbps(attr.active_speed) * lanes(attr.active_width);
  port.lid = attr.lid;
  if (attr.link_layer == IBV_LINK_LAYER_ETHERNET)
    port.netdev = readLine(fmt::format("/sys/class/infiniband/{}/ports/{}/gid_attrs/ndevs/0", device, number));
  for (int i = 0; i < attr.gid_tbl_len && static_cast<int>(port.gids.size()) < kMaxGidsKept; ++i) {
    ibv_gid gid;
    if (api.queryGid(ctx, static_cast<uint8_t>(number), i, &gid) != 0) continue;
    bool zero = true;
    for (uint8_t byte : gid.raw) zero &= byte == 0;
    if (zero) continue;
    std::string type =
        port.linkLayer == "InfiniBand"
            ? "IB"
            : readLine(fmt::format("/sys/class/infiniband/{}/ports/{}/gid_attrs/types/{}", device, number, i));
    port.gids.push_back({i, formatGid(gid), type});
  }
  return port;
}

}  // namespace

std::vector<VerbsDevice> listVerbsDevices(std::string* note) {
  std::vector<VerbsDevice> out;
  note->clear();
  const VerbsApi* api = verbsApi(note);
  if (api == nullptr) return out;
  int count = 0;
  ibv_device** list = api->getDeviceList(&count);
  if (list == nullptr) {
    // ENOSYS: the kernel has no RDMA subsystem, the usual case on hosts without such NICs.
    *note = fmt::format("ibv_get_device_list: {}", strerror(errno));
    return out;
  }
  for (int d = 0; d < count; ++d) {
    VerbsDevice device;
    device.name = api->getDeviceName(list[d]);
    device.pciBusId = pciBusIdOf(device.name);
    ibv_context* ctx = api->openDevice(list[d]);
    if (ctx == nullptr) {
      *note += fmt::format("{}{}: cannot be opened: {}", note->empty() ? "" : "; ", device.name, strerror(errno));
      continue;
    }
    ibv_device_attr attr;
    memset(&attr, 0, sizeof(attr));
    if (api->queryDevice(ctx, &attr) == 0) {
      uint64_t guid = be64toh(attr.node_guid);
      device.nodeGuid = fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", guid >> 48, (guid >> 32) & 0xffff,
                                    (guid >> 16) & 0xffff, guid & 0xffff);
      for (int p = 1; p <= attr.phys_port_cnt; ++p) device.ports.push_back(queryPort(*api, ctx, device.name, p));
    } else {
      *note += fmt::format("{}{}: ibv_query_device failed", note->empty() ? "" : "; ", device.name);
    }
    api->closeDevice(ctx);
    out.push_back(device);
  }
  api->freeDeviceList(list);
  if (out.empty() && note->empty()) *note = "rdma-core lists none";
  return out;
}

#else

std::vector<VerbsDevice> listVerbsDevices(std::string* note) {
  *note = "built without rdma-core (SLIMECCL_WITH_IB=OFF)";
  return {};
}

#endif

}  // namespace slimeccl
