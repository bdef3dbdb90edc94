#include "cuda_streams.h"

#include <map>
#include <mutex>

#include "errors.h"

namespace py = pybind11;

namespace slimeccl_python {
namespace {

std::mutex cacheMutex;
std::map<uintptr_t, slimecclStream_t>& cache() {
  static auto* streams = new std::map<uintptr_t, slimecclStream_t>;
  return *streams;
}

uintptr_t handleOf(const py::handle& stream, const char* op) {
  if (stream.is_none()) return 0;
  py::handle value = py::hasattr(stream, "cuda_stream") ? stream.attr("cuda_stream") : stream;
  if (!py::isinstance<py::int_>(value))
    raise(slimecclInvalidArgument, std::string(op) +
                                       ": stream must be a cudaStream_t as an int or an object with "
                                       "`cuda_stream` (such as torch.cuda.Stream)");
  return value.cast<uintptr_t>();
}

}  // namespace

slimecclStream_t streamFor(const py::handle& stream, bool onCuda, const char* op) {
  if (!onCuda && stream.is_none()) return nullptr;
  const uintptr_t handle = handleOf(stream, op);
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cache().find(handle);
  if (it != cache().end()) return it->second;
  slimecclStream_t made = nullptr;
  check(slimecclStreamCreateFromCuda(&made, reinterpret_cast<void*>(handle)), nullptr);
  cache().emplace(handle, made);
  return made;
}

void destroyCudaStreams() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  for (auto& [handle, stream] : cache()) slimecclStreamDestroy(stream);
  cache().clear();
}

}  // namespace slimeccl_python
