// Functions of the CUDA driver, found through the runtime, so that the library does not link
// libcuda (absent where there is no GPU driver, which must not stop the library from loading).
#pragma once

namespace slimeccl {

// The driver's `name` as of CUDA version `version` (e.g. 11070), or null where the driver lacks it.
void* driverEntryPoint(const char* name, int version);

// The same, typed: driverFunction<PFN_cuX_vN>("cuX", N). Callers keep it: the lookup is not free.
template <typename Fn>
Fn driverFunction(const char* name, int version) {
  return reinterpret_cast<Fn>(driverEntryPoint(name, version));
}

}  // namespace slimeccl
