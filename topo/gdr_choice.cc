#include "topo/gdr_choice.h"

#include <strings.h>

#include <fmt/format.h>

namespace slimeccl {
namespace {

GdrChoice staging(const GdrFacts& facts, const std::string& why) {
  GdrChoice choice;
  choice.refused = facts.setting == GdrSetting::On;
  choice.reason = facts.setting == GdrSetting::On
                      ? fmt::format("SLIMECCL_GDR=on asks for GPUDirect RDMA, which cannot be used: {}", why)
                      : fmt::format("host staging: {}", why);
  return choice;
}

}  // namespace

GdrChoice chooseGdr(const GdrFacts& facts) {
  if (facts.setting == GdrSetting::Off)
    return GdrChoice{DeviceMemoryRoute::None, false, "host staging: SLIMECCL_GDR=off"};
  if (facts.module.empty()) return staging(facts, "no module serves peers on other hosts");
  // The NIC first: on a machine without one that takes device memory, the GPU does not matter.
  if (facts.nic.device.empty() || (!facts.nic.dmabuf && !facts.nic.peerMemory)) return staging(facts, facts.nic.why);
  if (!facts.gpu) return staging(facts, fmt::format("no GPU ({})", facts.gpuWhy));
  if (!facts.gpuRdma)
    return staging(facts, fmt::format("GPU {} does not support GPUDirect RDMA (with host flushes of a NIC's writes)",
                                      facts.gpuIndex));
  DeviceMemoryRoute route = DeviceMemoryRoute::None;
  if (facts.gpuDmabuf && facts.nic.dmabuf)
    route = DeviceMemoryRoute::Dmabuf;
  else if (facts.nic.peerMemory)
    route = DeviceMemoryRoute::PeerMemory;
  if (route == DeviceMemoryRoute::None)
    return staging(facts, fmt::format("GPU {} does not export dmabufs, and {}", facts.gpuIndex, facts.nic.why));
  const std::string pair = fmt::format("GPU {} and {}", facts.gpuIndex, facts.nic.device);
  if (facts.setting == GdrSetting::Auto) {
    if (!facts.pathKnown)
      return staging(facts, fmt::format("the PCI path between {} is not known (SLIMECCL_GDR=on uses it anyway)", pair));
    if (facts.path > facts.farthest)
      return staging(facts, fmt::format("{} are {} apart, farther than SLIMECCL_GDR_LEVEL={}", pair,
                                        pathClassName(facts.path), pathClassName(facts.farthest)));
  }
  const std::string distance = facts.pathKnown ? fmt::format(", {} apart", pathClassName(facts.path)) : "";
  return GdrChoice{
      route, false,
      fmt::format("GPUDirect RDMA by {}: {}{} ({})", deviceMemoryRouteName(route), pair, distance, facts.nic.why)};
}

bool parseGdrSetting(const std::string& text, GdrSetting* out) {
  if (text.empty() || text == "auto")
    *out = GdrSetting::Auto;
  else if (text == "off" || text == "0")
    *out = GdrSetting::Off;
  else if (text == "on" || text == "1")
    *out = GdrSetting::On;
  else
    return false;
  return true;
}

bool parsePathClass(const std::string& text, PathClass* out) {
  for (PathClass c : {PathClass::Pix, PathClass::Pxb, PathClass::Phb, PathClass::Node, PathClass::Sys}) {
    if (strcasecmp(text.c_str(), pathClassName(c)) != 0) continue;
    *out = c;
    return true;
  }
  return false;
}

}  // namespace slimeccl
