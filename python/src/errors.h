// slimeccl.Error: every failure of the package, carrying slimeccl's result code and sentence.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "slimeccl.h"

namespace slimeccl_python {

// Creates slimeccl._core.Error (a RuntimeError with `code` and `code_name`) in module m.
void defineError(pybind11::module_& m);
// Raises slimeccl.Error with this code and sentence (throws pybind11::error_already_set).
[[noreturn]] void raise(slimecclResult_t code, const std::string& sentence);
// Raises slimeccl.Error unless rc is slimecclSuccess; the sentence is the comm's last error
// (the thread's when comm is NULL).
void check(slimecclResult_t rc, slimecclComm_t comm);

}  // namespace slimeccl_python
