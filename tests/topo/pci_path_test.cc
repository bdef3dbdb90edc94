// PCI distance classes and hop counts, on the synthetic hosts and on hand-made paths.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"
#include "topo/pci_path.h"

namespace slimeccl::test {
namespace {

PciPath pathBetween(const TopoSummary& topo, const std::string& a, const std::string& b) {
  return pciPath(topo.pci[pciIndex(topo, a)], topo.pci[pciIndex(topo, b)]);
}

void expectPath(const PciPath& path, PathClass pathClass, int hops) {
  EXPECT_STREQ(pathClassName(path.pathClass), pathClassName(pathClass));
  EXPECT_EQ(path.hops, hops);
}

TEST(PciPath, TwoSocketHostFromGpu0) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  expectPath(pathBetween(topo, "0000:13:00.0", "0000:15:00.0"), PathClass::Pix, 4);    // its NIC
  expectPath(pathBetween(topo, "0000:13:00.0", "0000:14:00.0"), PathClass::Pix, 4);    // GPU 1
  expectPath(pathBetween(topo, "0000:13:00.0", "0000:25:00.0"), PathClass::Node, 10);  // other host bridge
  expectPath(pathBetween(topo, "0000:13:00.0", "0000:95:00.0"), PathClass::Sys, 12);   // other socket
  expectPath(pathBetween(topo, "0000:13:00.0", "0000:10:02.0"), PathClass::Phb, 5);    // NVSwitch
}

TEST(PciPath, IsSymmetric) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  PciPath there = pathBetween(topo, "0000:24:00.0", "0000:a5:00.0");
  PciPath back = pathBetween(topo, "0000:a5:00.0", "0000:24:00.0");
  EXPECT_EQ(there.pathClass, back.pathClass);
  EXPECT_EQ(there.hops, back.hops);
}

TEST(PciPath, SingleNumaHostGpuSharesASwitchWithOneNic) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  expectPath(pathBetween(topo, "0000:03:00.0", "0000:04:00.0"), PathClass::Pix, 4);
  expectPath(pathBetween(topo, "0000:03:00.0", "0000:00:1f.6"), PathClass::Phb, 5);
  expectPath(pathBetween(topo, "0000:03:00.0", "0000:03:00.1"), PathClass::Pix, 2);  // same slot
}

// root port R over switches S1 and S2; devices A (below S1) and B (below S2).
TEST(PciPath, SwitchesBelowOneRootPortArePxb) {
  auto node = [](uint64_t id, TopoNodeKind kind) { return TopoNode{id, kind}; };
  PciDevice a, b;
  a.path = {node(10, TopoNodeKind::PciDevice), node(11, TopoNodeKind::PciBridge), node(12, TopoNodeKind::PciBridge),
            node(2, TopoNodeKind::PciBridge),  node(1, TopoNodeKind::HostBridge), node(0, TopoNodeKind::Cpu)};
  b.path = {node(20, TopoNodeKind::PciDevice), node(21, TopoNodeKind::PciBridge), node(22, TopoNodeKind::PciBridge),
            node(2, TopoNodeKind::PciBridge),  node(1, TopoNodeKind::HostBridge), node(0, TopoNodeKind::Cpu)};
  expectPath(pciPath(a, b), PathClass::Pxb, 6);
}

TEST(PciPath, UnknownNodesAcrossTheCpuAreSys) {
  auto node = [](uint64_t id, TopoNodeKind kind) { return TopoNode{id, kind}; };
  PciDevice a, b;
  a.path = {node(10, TopoNodeKind::PciDevice), node(1, TopoNodeKind::HostBridge), node(0, TopoNodeKind::Cpu)};
  b.path = {node(20, TopoNodeKind::PciDevice), node(2, TopoNodeKind::HostBridge), node(0, TopoNodeKind::Cpu)};
  expectPath(pciPath(a, b), PathClass::Sys, 4);
  a.numaNode = b.numaNode = 3;
  expectPath(pciPath(a, b), PathClass::Node, 4);
}

}  // namespace
}  // namespace slimeccl::test
