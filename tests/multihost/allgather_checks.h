// AllGather checked element by element, out of place and in place.
#pragma once

#include <cstddef>

#include "check_support.h"

namespace multihost {

// One AllGather of `count` elements per rank of type T (int8_t, float or double).
template <typename T>
void checkAllgather(const CommView& view, size_t count, bool inPlace);

// The sweep: counts 1, 1000, 1 MiB / size + 3 and 8 MiB / size, for int8, float and double,
// each out of place and in place.
void runAllgatherSweep(const CommView& view);

}  // namespace multihost
