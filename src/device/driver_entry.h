// Functions of the CUDA driver, found through the runtime, so that the library does not link
// libcuda (absent where there is no GPU driver, which must not stop the library from loading).
#pragma once

namespace slimeccl {

// The driver's `name` as of CUDA version `version` (e.g. 11070), or null where the driver lacks it.
void* driverEntryPoint(const char* name, int version);

// The same, typed and looked up once: driverFunction<PFN_cuX_vN>("cuX", N). Each PFN type names
// one driver function, so the lookup is kept per type.
template <typename Fn>
Fn driverFunction(const char* name, int version) {
  static const Fn fn = reinterpret_cast<Fn>(driverEntryPoint(name, version));
  return fn;
}

}  // namespace slimeccl
