// slimeccl._torch_backend: makes the "slimeccl" process group for torch.distributed (slimeccl/torch.py
// registers it).
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/python.h>

#include "op_route.h"
#include "process_group.h"

namespace py = pybind11;

PYBIND11_MODULE(_torch_backend, m) {
  m.doc() = "torch.distributed's slimeccl backend (import slimeccl.torch to register it)";
  // torch.distributed calls it with (store, rank, world_size, timeout); init blocks until every
  // rank has joined, so it runs without the GIL.
  m.def("create_process_group", &slimeccl_torch::ProcessGroupSlimeccl::create, py::arg("store"), py::arg("rank"),
        py::arg("size"), py::arg("timeout"), py::call_guard<py::gil_scoped_release>());
#ifdef SLIMECCL_TORCH_CUDA
  m.attr("built_with_cuda") = true;
#else
  m.attr("built_with_cuda") = false;
#endif
  m.def(
      "last_op_route",
      [](const c10::intrusive_ptr<slimeccl_torch::BackendBase>& backend) {
        auto* ours = dynamic_cast<slimeccl_torch::ProcessGroupSlimeccl*>(backend.get());
        if (ours == nullptr) throw py::type_error("last_op_route: not a slimeccl process group");
        return slimeccl_python::opRouteDict(ours->lastOpRoute());
      },
      py::arg("backend"),
      "How this rank's last started op of the group's communicator ran (slimecclCommGetLastOpRoute); "
      "slimeccl.torch.last_op_route finds the backend of a process group");
}
