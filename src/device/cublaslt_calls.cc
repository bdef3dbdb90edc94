#include "src/device/cublaslt_calls.h"

#ifdef SLIMECCL_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "src/base/error.h"

namespace slimeccl {
namespace {

struct Loaded {
  CublasLtCalls calls{};
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool bind(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

// dlopen's own search (LD_LIBRARY_PATH, this library's RUNPATH, the system's), then the folder of
// the CUDA runtime in use: Python wheels keep cuBLASLt beside it.
void* openCublasLt(const std::string& file, std::string* why) {
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
  const std::string file = "libcublasLt.so." + std::to_string(CUDART_VERSION / 1000);
  void* handle = openCublasLt(file, &loaded.why);
  if (handle == nullptr) return loaded;
  CublasLtCalls& c = loaded.calls;
  loaded.ok = bind(handle, "cublasLtCreate", &c.create) && bind(handle, "cublasLtDestroy", &c.destroy) &&
              bind(handle, "cublasLtMatmulDescCreate", &c.descCreate) &&
              bind(handle, "cublasLtMatmulDescDestroy", &c.descDestroy) &&
              bind(handle, "cublasLtMatmulDescSetAttribute", &c.descSetAttribute) &&
              bind(handle, "cublasLtMatrixLayoutCreate", &c.layoutCreate) &&
              bind(handle, "cublasLtMatrixLayoutDestroy", &c.layoutDestroy) &&
              bind(handle, "cublasLtMatmulPreferenceCreate", &c.preferenceCreate) &&
              bind(handle, "cublasLtMatmulPreferenceDestroy", &c.preferenceDestroy) &&
              bind(handle, "cublasLtMatmulPreferenceSetAttribute", &c.preferenceSetAttribute) &&
              bind(handle, "cublasLtMatmulAlgoGetHeuristic", &c.heuristic) &&
              bind(handle, "cublasLtMatmul", &c.matmul) && bind(handle, "cublasLtGetStatusString", &c.statusString);
  // The library stays loaded for the process's life: handles made from it may outlive any comm.
  if (!loaded.ok) loaded.why = file + " lacks a call this library needs";
  return loaded;
}

}  // namespace

slimecclResult_t cublasLtCalls(int rank, const char* what, const CublasLtCalls** out) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  *out = loaded.ok ? &loaded.calls : nullptr;
  if (!loaded.ok)
    return fail(slimecclUnhandledDeviceError,
                "rank {}: {}: cuBLASLt could not be loaded ({}); install the CUDA toolkit's cuBLAS or put its "
                "folder on LD_LIBRARY_PATH",
                rank, what, loaded.why);
  return slimecclSuccess;
}

}  // namespace slimeccl

#endif
