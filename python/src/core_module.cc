// slimeccl._core: the C API for Python. slimeccl/__init__.py is the package's face.
#include <pybind11/pybind11.h>

#include <string>

#include "comm_binding.h"
#include "cuda_streams.h"
#include "errors.h"

namespace py = pybind11;

namespace {

py::bytes uniqueId() {
  slimecclUniqueId id;
  slimeccl_python::check(slimecclGetUniqueId(&id), nullptr);
  return py::bytes(id.internal, sizeof(id.internal));
}

int libraryVersion() {
  int version = 0;
  slimeccl_python::check(slimecclGetVersion(&version), nullptr);
  return version;
}

void groupCall(slimecclResult_t (*call)()) {
  slimecclResult_t rc;
  {
    py::gil_scoped_release released;
    rc = call();
  }
  slimeccl_python::check(rc, nullptr);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "slimeccl's C API for Python (use the slimeccl package)";
  slimeccl_python::defineError(m);
  py::enum_<slimecclRedOp_t>(m, "RedOp")
      .value("SUM", slimecclSum)
      .value("PROD", slimecclProd)
      .value("MAX", slimecclMax)
      .value("MIN", slimecclMin)
      .value("AVG", slimecclAvg)
      .export_values();
  m.def("get_unique_id", &uniqueId, "A new communicator's unique id (bytes), to send to every rank.");
  m.def("version", &libraryVersion, "The loaded library's version code (major*10000 + minor*100 + patch).");
  m.def("group_start", [] { groupCall(slimecclGroupStart); });
  m.def("group_end", [] { groupCall(slimecclGroupEnd); });
  m.attr("UNIQUE_ID_BYTES") = SLIMECCL_UNIQUE_ID_BYTES;
  slimeccl_python::defineComm(m);
  // The cached CUDA-ordered streams go before the library's own exit handlers run.
  py::module_::import("atexit").attr("register")(py::cpp_function(&slimeccl_python::destroyCudaStreams));
}
