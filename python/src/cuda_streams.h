// The slimeccl stream in the order of each CUDA stream a Python caller names, made on first use
// and kept until the interpreter exits (as NCCL's communicators keep theirs).
#pragma once

#include <pybind11/pybind11.h>

#include "slimeccl.h"

namespace slimeccl_python {

// The stream an op on these buffers runs on: NULL (the call returns when done) for host buffers
// with no stream named; for CUDA buffers, the slimeccl stream of `stream` (an int cudaStream_t or
// an object with `cuda_stream`, such as torch.cuda.Stream), the legacy default stream when None.
slimecclStream_t streamFor(const pybind11::handle& stream, bool onCuda, const char* op);
// Destroys the cached streams (at interpreter exit).
void destroyCudaStreams();

}  // namespace slimeccl_python
