#include "buffer_view.h"

#include <dlpack/dlpack.h>

#include <cstring>

#include "errors.h"

namespace py = pybind11;

namespace slimeccl_python {
namespace {

[[noreturn]] void refuse(const std::string& op, const char* what, const std::string& cause) {
  raise(slimecclInvalidArgument, op + ": the " + what + " buffer " + cause);
}

// The datatype of a buffer-protocol format ("f", "<i8", "B", ...), or -1.
int typeOfFormat(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) return slimecclUint8;  // plain bytes
  while (*format == '<' || *format == '=' || *format == '@' || *format == '!') ++format;
  if (strlen(format) != 1) return -1;
  const bool isSigned = *format == 'b' || *format == 'h' || *format == 'i' || *format == 'l' || *format == 'q';
  const bool isUnsigned = *format == 'B' || *format == 'H' || *format == 'I' || *format == 'L' || *format == 'Q';
  if (*format == 'e') return slimecclFloat16;
  if (*format == 'f') return slimecclFloat32;
  if (*format == 'd') return slimecclFloat64;
  if (*format == 'c' || *format == '?') return slimecclUint8;
  if (isSigned || isUnsigned) {
    switch (itemsize) {
      case 1: return isSigned ? slimecclInt8 : slimecclUint8;
      case 4: return isSigned ? slimecclInt32 : slimecclUint32;
      case 8: return isSigned ? slimecclInt64 : slimecclUint64;
      default: return -1;
    }
  }
  return -1;
}

int typeOfDlpack(DLDataType t) {
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLInt: return t.bits == 8 ? slimecclInt8 : t.bits == 32 ? slimecclInt32 : t.bits == 64 ? slimecclInt64 : -1;
    case kDLUInt:
      return t.bits == 8 ? slimecclUint8 : t.bits == 32 ? slimecclUint32 : t.bits == 64 ? slimecclUint64 : -1;
    case kDLFloat:
      return t.bits == 16 ? slimecclFloat16 : t.bits == 32 ? slimecclFloat32 : t.bits == 64 ? slimecclFloat64 : -1;
    case kDLBfloat: return t.bits == 16 ? slimecclBfloat16 : -1;
    default: return -1;
  }
}

BufferView viewOfBuffer(const py::handle& obj, const std::string& op, const char* what, bool writable) {
  auto buffer = std::shared_ptr<Py_buffer>(new Py_buffer, [](Py_buffer* b) {
    PyBuffer_Release(b);
    delete b;
  });
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), buffer.get(), flags) != 0) {
    std::string cause = py::error_already_set().what();
    refuse(op, what,
           std::string("cannot be read as a contiguous") + (writable ? ", writable" : "") + " buffer (" + cause + ")");
  }
  int type = typeOfFormat(buffer->format, buffer->itemsize);
  if (type < 0) refuse(op, what, std::string("has element format '") + buffer->format + "', which no datatype matches");
  BufferView v;
  v.data = buffer->buf;
  v.count = static_cast<size_t>(buffer->len / buffer->itemsize);
  if (buffer->shape != nullptr)
    v.shape.assign(buffer->shape, buffer->shape + buffer->ndim);
  else
    v.shape = {static_cast<int64_t>(v.count)};
  v.type = static_cast<slimecclDataType_t>(type);
  v.owner = buffer;
  return v;
}

bool rowMajor(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

BufferView viewOfDlpack(const py::handle& obj, const std::string& op, const char* what) {
  py::object capsule = obj.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    refuse(op, what, "gave a DLPack capsule that is not an unused \"dltensor\"");
  }
  // Consumed: the capsule must no longer free the tensor; this view does, when the op is done.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  auto owner = std::shared_ptr<DLManagedTensor>(managed, [](DLManagedTensor* m) {
    if (m->deleter != nullptr) m->deleter(m);
  });
  const DLTensor& t = managed->dl_tensor;
  int type = typeOfDlpack(t.dtype);
  if (type < 0)
    refuse(op, what,
           "has a DLPack datatype (code " + std::to_string(t.dtype.code) + ", " + std::to_string(t.dtype.bits) +
               " bits) that no slimeccl datatype matches");
  if (!rowMajor(t)) refuse(op, what, "is not contiguous (make it so with .contiguous())");
  const DLDeviceType device = t.device.device_type;
  if (device != kDLCPU && device != kDLCUDAHost && device != kDLCUDA && device != kDLCUDAManaged)
    refuse(op, what, "lives on DLPack device type " + std::to_string(device) + " (CPU and CUDA are supported)");
  size_t count = 1;
  for (int d = 0; d < t.ndim; ++d) count *= static_cast<size_t>(t.shape[d]);
  BufferView v;
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  v.count = count;
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.type = static_cast<slimecclDataType_t>(type);
  v.onCuda = device == kDLCUDA || device == kDLCUDAManaged;
  v.cudaDevice = v.onCuda ? t.device.device_id : -1;
  v.owner = owner;
  return v;
}

}  // namespace

BufferView viewOf(const py::handle& obj, const std::string& op, const char* what, bool writable) {
  if (obj.is_none()) refuse(op, what, "is None");
  // torch tensors have no buffer protocol; numpy arrays have both, and the buffer protocol also
  // tells a read-only array from a writable one.
  if (PyObject_CheckBuffer(obj.ptr())) return viewOfBuffer(obj, op, what, writable);
  if (py::hasattr(obj, "__dlpack__")) return viewOfDlpack(obj, op, what);
  refuse(op, what,
         std::string("is a ") + Py_TYPE(obj.ptr())->tp_name +
             ", which offers neither the buffer protocol nor DLPack (__dlpack__)");
}

}  // namespace slimeccl_python
