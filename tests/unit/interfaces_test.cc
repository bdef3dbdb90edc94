#include <gtest/gtest.h>

#include "topo/interfaces.h"

namespace slimeccl {
namespace {

std::vector<NetInterface> fakeInterfaces() {
  std::vector<NetInterface> all;
  for (const char* name : {"lo", "docker0", "eth0", "eth1", "ib0", "veth3"}) {
    NetInterface iface;
    iface.name = name;
    iface.addr.u.v4.sin_family = AF_INET;
    all.push_back(iface);
  }
  return all;
}

std::vector<std::string> names(const std::vector<NetInterface>& list) {
  std::vector<std::string> out;
  for (const auto& i : list) out.push_back(i.name);
  return out;
}

TEST(Interfaces, DefaultSkipsLoopbackAndBridges) {
  EXPECT_EQ(names(matchInterfaces(fakeInterfaces(), "")), (std::vector<std::string>{"eth0", "eth1", "ib0", "veth3"}));
}

TEST(Interfaces, DefaultFallsBackToLoopback) {
  std::vector<NetInterface> onlyLo(1);
  onlyLo[0].name = "lo";
  EXPECT_EQ(names(matchInterfaces(onlyLo, "")), (std::vector<std::string>{"lo"}));
}

TEST(Interfaces, PrefixListSelects) {
  EXPECT_EQ(names(matchInterfaces(fakeInterfaces(), "eth,ib")), (std::vector<std::string>{"eth0", "eth1", "ib0"}));
}

TEST(Interfaces, CaretExcludes) {
  EXPECT_EQ(names(matchInterfaces(fakeInterfaces(), "^eth,lo,docker")), (std::vector<std::string>{"ib0", "veth3"}));
}

TEST(Interfaces, EqualsMatchesExactNames) {
  EXPECT_EQ(names(matchInterfaces(fakeInterfaces(), "=eth")), (std::vector<std::string>{}));
  EXPECT_EQ(names(matchInterfaces(fakeInterfaces(), "=eth1")), (std::vector<std::string>{"eth1"}));
}

TEST(Interfaces, NoMatchIsAClearError) {
  NetInterface out;
  EXPECT_EQ(selectInterface("nosuchif", &out), slimecclInvalidArgument);
}

TEST(Interfaces, LoopbackIsFound) {
  NetInterface out;
  ASSERT_EQ(selectInterface("lo", &out), slimecclSuccess);
  EXPECT_EQ(out.name, "lo");
}

}  // namespace
}  // namespace slimeccl
