// SLIMECCL_IB_HCA: which verbs devices and ports the library may use. The syntax is NCCL's:
// a comma list of device name prefixes, each optionally ":port"; a leading '^' excludes what the
// list names, a leading '=' asks for exact device names ("=mlx5_1:1,mlx5_3").
#pragma once

#include <string>
#include <vector>

namespace slimeccl {

struct HcaFilter {
  struct Entry {
    std::string device;
    int port = -1;  // -1: every port
  };
  bool exclude = false;
  bool exact = false;
  std::vector<Entry> entries;  // empty: every device
};

HcaFilter parseHcaFilter(const std::string& spec);
bool hcaFilterAccepts(const HcaFilter& filter, const std::string& device, int port);

}  // namespace slimeccl
