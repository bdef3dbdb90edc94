#include "errors.h"

namespace py = pybind11;

namespace slimeccl_python {
namespace {

PyObject* errorType = nullptr;  // owned by the module, which outlives every call

}  // namespace

void defineError(py::module_& m) {
  errorType = PyErr_NewExceptionWithDoc("slimeccl._core.Error",
                                        "A failed slimeccl call: str() is slimeccl's sentence (rank, peer, op, "
                                        "cause); `code` is the slimecclResult_t, `code_name` its name.",
                                        PyExc_RuntimeError, nullptr);
  if (errorType == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(errorType));
}

void raise(slimecclResult_t code, const std::string& sentence) {
  py::object error = py::reinterpret_borrow<py::object>(errorType)(sentence);
  error.attr("code") = static_cast<int>(code);
  error.attr("code_name") = slimecclGetErrorString(code);
  PyErr_SetObject(errorType, error.ptr());
  throw py::error_already_set();
}

void check(slimecclResult_t rc, slimecclComm_t comm) {
  if (rc == slimecclSuccess) return;
  const char* sentence = slimecclGetLastError(comm);
  raise(rc, sentence != nullptr && *sentence != '\0' ? sentence : slimecclGetErrorString(rc));
}

}  // namespace slimeccl_python
