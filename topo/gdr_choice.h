// Whether a rank's device buffers cross to other hosts by GPUDirect RDMA (the NIC reads and writes
// GPU memory) or through host staging, from what the GPU, the NIC and the PCI path between them
// allow and what SLIMECCL_GDR and SLIMECCL_GDR_LEVEL ask. Decided alone: the caller gathers the
// facts (src/device/rdma_choice.h).
#pragma once

#include <string>

#include "net/net.h"
#include "topo/pci_path.h"

namespace slimeccl {

// SLIMECCL_GDR: auto (where everything allows it and the NIC is near enough), off, or on (where
// everything allows it, however far; else init fails with the reason).
enum class GdrSetting { Auto, Off, On };

struct GdrFacts {
  GdrSetting setting = GdrSetting::Auto;
  PathClass farthest = PathClass::Pxb;  // SLIMECCL_GDR_LEVEL: the farthest path auto accepts
  // The GPU the rank uses.
  bool gpu = false;
  std::string gpuWhy;  // where there is none: the reason
  int gpuIndex = -1;
  bool gpuRdma = false;    // it lets a NIC reach its memory, and the host flush the NIC's writes
  bool gpuDmabuf = false;  // and exports dmabufs
  // The module that serves peers on other hosts, and its device's answer.
  std::string module;  // "" where every peer is on this host
  DeviceMemorySupport nic;
  // The PCI path from the GPU to the NIC, where the topology shows both.
  bool pathKnown = false;
  PathClass path = PathClass::Sys;
};

struct GdrChoice {
  DeviceMemoryRoute route = DeviceMemoryRoute::None;  // None: host staging
  bool refused = false;                               // SLIMECCL_GDR=on, and it cannot be: init fails with `reason`
  std::string reason;                                 // a sentence, either way
};

GdrChoice chooseGdr(const GdrFacts& facts);

// "auto", "off", "on" (also 0 and 1); false for anything else.
bool parseGdrSetting(const std::string& text, GdrSetting* out);
// "PIX", "PXB", "PHB", "NODE", "SYS" (any case); false for anything else.
bool parsePathClass(const std::string& text, PathClass* out);

}  // namespace slimeccl
