// How this library's entry points are declared: exported C symbols. PROFILING_NAME(ncclX) gives
// ncclX its twin pncclX (NCCL's profiling interface), in the file that defines ncclX.
#pragma once

#define NCCL_API extern "C" __attribute__((visibility("default")))
#define PROFILING_NAME(name) extern "C" __attribute__((visibility("default"), alias(#name))) decltype(name) p##name;
