#include "tests/topo/synthetic_hosts.h"

#include <gtest/gtest.h>

#include "src/base/error.h"
#include "topo/topology_loader.h"

namespace slimeccl::test {

std::string syntheticHostPath(const std::string& file) { return std::string(SLIMECCL_TOPO_TEST_DATA) + "/" + file; }

TopoSummary loadSyntheticHost(const std::string& file) {
  TopoSummary topo;
  TopoSource source;
  source.xmlPath = syntheticHostPath(file);
  EXPECT_EQ(loadTopology(source, &topo), slimecclSuccess) << threadError();
  return topo;
}

int nicIndex(const TopoSummary& topo, const std::string& name) {
  for (int i = 0; i < static_cast<int>(topo.nics.size()); ++i)
    if (topo.nics[i].name == name) return i;
  return -1;
}

int pciIndex(const TopoSummary& topo, const std::string& busId) {
  for (int i = 0; i < static_cast<int>(topo.pci.size()); ++i)
    if (topo.pci[i].busId == busId) return i;
  return -1;
}

}  // namespace slimeccl::test
