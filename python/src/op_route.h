// How an op ran, as both extension modules hand it to Python.
#pragma once

#include <pybind11/pybind11.h>

#include "slimeccl.h"

namespace slimeccl_python {

// {"op": "AllReduce", "route": "net", "algorithm": "ring", "seq": 3}: route is none, net,
// shared_slots, eager, gpu_to_gpu or host_tiers.
pybind11::dict opRouteDict(const slimecclOpRoute& route);

}  // namespace slimeccl_python
