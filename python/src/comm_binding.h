// slimeccl.Comm: one rank's communicator, and its collectives and Send/Recv on Python buffers.
#pragma once

#include <pybind11/pybind11.h>

namespace slimeccl_python {

void defineComm(pybind11::module_& m);

}  // namespace slimeccl_python
