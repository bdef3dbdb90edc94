// Deterministic buffer contents for result checking. Every value is a small non-negative integer,
// exactly representable in its datatype (half and bfloat16 included), so a data-movement result must
// match the expected buffer bit for bit. Poison (all bits set) is outside every pattern: -1 for
// signed, the maximum for unsigned types, NaN for floating types.
#pragma once

#include <cstddef>
#include <cstdint>

#include "slimeccl.h"

namespace slimeccl_perf {

// Value of element `index` of rank `rank`'s input: in [0, patternPeriod(type)).
uint64_t patternValue(slimecclDataType_t type, int rank, size_t index);
// The largest count of distinct pattern values, chosen so each one is exact in the type.
uint64_t patternPeriod(slimecclDataType_t type);

// Writes `value` as element `index` of a buffer of `type`.
void storeValue(slimecclDataType_t type, uint64_t value, void* buffer, size_t index);

// Elements [0, count) of `buffer` get rank `rank`'s pattern from element `firstIndex` on.
void fillPattern(void* buffer, slimecclDataType_t type, size_t count, int rank, size_t firstIndex = 0);
void fillPoison(void* buffer, slimecclDataType_t type, size_t count);

// Elements of `actual` whose bits differ from `expected`.
size_t countMismatches(const void* actual, const void* expected, slimecclDataType_t type, size_t count);

}  // namespace slimeccl_perf
