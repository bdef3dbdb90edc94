#include "op_route.h"

#include <iterator>

namespace slimeccl_python {

pybind11::dict opRouteDict(const slimecclOpRoute& route) {
  static const char* const names[] = {"none", "net", "shared_slots", "eager", "gpu_to_gpu", "host_tiers"};
  const int r = static_cast<int>(route.route);
  pybind11::dict out;
  out["op"] = route.op;
  out["route"] = r >= 0 && r < static_cast<int>(std::size(names)) ? names[r] : "unknown";
  out["algorithm"] = route.algorithm;
  out["seq"] = route.seq;
  return out;
}

}  // namespace slimeccl_python
