// SLIMECCL_IB_HCA: prefixes, exact names, exclusions and ports.
#include <gtest/gtest.h>

#include "topo/hca_filter.h"

namespace slimeccl {
namespace {

TEST(HcaFilter, EmptyAcceptsEverything) {
  HcaFilter filter = parseHcaFilter("");
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_0", 1));
  EXPECT_TRUE(hcaFilterAccepts(filter, "rxe_a", 2));
}

TEST(HcaFilter, PrefixesMatchByDefault) {
  HcaFilter filter = parseHcaFilter("mlx5_1,rxe");
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_1", 1));
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_10", 1));
  EXPECT_TRUE(hcaFilterAccepts(filter, "rxe_b", 1));
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_0", 1));
}

TEST(HcaFilter, EqualsAsksForExactNames) {
  HcaFilter filter = parseHcaFilter("=mlx5_1");
  EXPECT_TRUE(filter.exact);
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_1", 1));
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_10", 1));
}

TEST(HcaFilter, CaretExcludes) {
  HcaFilter filter = parseHcaFilter("^mlx5_1, mlx5_3");
  EXPECT_TRUE(filter.exclude);
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_0", 1));
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_1", 1));
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_3", 1));
}

TEST(HcaFilter, PortsNarrowAnEntry) {
  HcaFilter filter = parseHcaFilter("mlx5_0:2,mlx5_1");
  ASSERT_EQ(filter.entries.size(), 2u);
  EXPECT_EQ(filter.entries[0].port, 2);
  EXPECT_EQ(filter.entries[1].port, -1);
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_0", 1));
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_0", 2));
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_1", 1));
}

TEST(HcaFilter, ExcludingOnePortKeepsTheOthers) {
  HcaFilter filter = parseHcaFilter("^=mlx5_0:1");
  EXPECT_FALSE(hcaFilterAccepts(filter, "mlx5_0", 1));
  EXPECT_TRUE(hcaFilterAccepts(filter, "mlx5_0", 2));
}

}  // namespace
}  // namespace slimeccl
