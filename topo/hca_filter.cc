#include "topo/hca_filter.h"

#include <cstdlib>

#include "src/base/util/strings.h"

namespace slimeccl {

HcaFilter parseHcaFilter(const std::string& spec) {
  HcaFilter filter;
  std::string rest = spec;
  if (!rest.empty() && rest[0] == '^') {
    filter.exclude = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    filter.exact = true;
    rest.erase(0, 1);
  }
  for (const std::string& item : splitList(rest, ',')) {
    if (item.empty()) continue;
    HcaFilter::Entry entry;
    size_t colon = item.find(':');
    entry.device = item.substr(0, colon);
    if (colon != std::string::npos) entry.port = atoi(item.c_str() + colon + 1);
    filter.entries.push_back(entry);
  }
  return filter;
}

bool hcaFilterAccepts(const HcaFilter& filter, const std::string& device, int port) {
  if (filter.entries.empty()) return true;
  bool named = false;
  for (const HcaFilter::Entry& entry : filter.entries) {
    bool nameHit = filter.exact ? device == entry.device : device.compare(0, entry.device.size(), entry.device) == 0;
    named |= nameHit && (entry.port < 0 || entry.port == port);
  }
  return named != filter.exclude;
}

}  // namespace slimeccl
