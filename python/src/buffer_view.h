// What an op needs of a Python buffer: its address, element count, datatype and where it lives.
// Read through DLPack (`__dlpack__`: torch tensors, CPU and CUDA, numpy arrays) or the buffer
// protocol (numpy arrays, bytearray, memoryview, array.array); contiguous buffers only.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "slimeccl.h"

namespace slimeccl_python {

struct BufferView {
  void* data = nullptr;
  size_t count = 0;  // elements
  std::vector<int64_t> shape;
  slimecclDataType_t type = slimecclUint8;
  bool onCuda = false;  // CUDA device memory (DLPack device kDLCUDA or kDLCUDAManaged)
  int cudaDevice = -1;
  // Keeps the exporter's memory alive while the op runs: the Py_buffer or the DLPack tensor.
  std::shared_ptr<void> owner;
};

// Reads `obj`; `what` ("send", "recv") and `writable` shape the sentence of a refusal, which
// raises slimeccl.Error (InvalidArgument) naming the op and the buffer.
BufferView viewOf(const pybind11::handle& obj, const std::string& op, const char* what, bool writable);

}  // namespace slimeccl_python
