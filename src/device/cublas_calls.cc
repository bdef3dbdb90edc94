#include "src/device/cublas_calls.h"

#ifdef SLIMECCL_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "src/base/error.h"

namespace slimeccl {
namespace {

struct Loaded {
  CublasCalls calls{};
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool bind(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

// dlopen's own search (LD_LIBRARY_PATH, this library's RUNPATH, the system's), then the folder of
// the CUDA runtime in use: Python wheels keep cuBLAS beside it.
void* openCublas(const std::string& file, std::string* why) {
  if (void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  *why = dlerror();
  Dl_info runtime{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &runtime) != 0 && runtime.dli_fname != nullptr) {
    const std::string path = runtime.dli_fname;
    const std::string beside = path.substr(0, path.rfind('/') + 1) + file;
    if (void* handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

Loaded load() {
  Loaded loaded;
  const std::string file = "libcublas.so." + std::to_string(CUDART_VERSION / 1000);
  void* handle = openCublas(file, &loaded.why);
  if (handle == nullptr) return loaded;
  CublasCalls& c = loaded.calls;
  loaded.ok = bind(handle, "cublasCreate_v2", &c.create) && bind(handle, "cublasDestroy_v2", &c.destroy) &&
              bind(handle, "cublasSetStream_v2", &c.setStream) &&
              bind(handle, "cublasSetWorkspace_v2", &c.setWorkspace) && bind(handle, "cublasGemmEx", &c.gemmEx) &&
              bind(handle, "cublasGetStatusString", &c.statusString);
  // The library stays loaded for the process's life: handles made from it may outlive any comm.
  if (!loaded.ok) loaded.why = file + " lacks a call this library needs";
  return loaded;
}

}  // namespace

slimecclResult_t cublasCalls(int rank, const CublasCalls** out) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  *out = loaded.ok ? &loaded.calls : nullptr;
  if (!loaded.ok)
    return fail(slimecclUnhandledDeviceError,
                "rank {}: AllGatherGemm: cuBLAS could not be loaded ({}); install the CUDA toolkit's cuBLAS or put "
                "its folder on LD_LIBRARY_PATH",
                rank, loaded.why);
  return slimecclSuccess;
}

}  // namespace slimeccl

#endif
