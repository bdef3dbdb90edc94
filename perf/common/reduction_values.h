// Inputs of the reduction collectives and their exact results. Every input is a small non-negative
// integer, chosen so that the reduction over all ranks is exact in the datatype whatever order the
// library combines the ranks in (half and bfloat16 included, each step rounded back):
//  - sum and avg: the sum over all ranks stays within the integers the type holds exactly;
//  - prod: factors are 1 or 2, with at most as many 2s per element as the type's largest exact power of two allows;
//  - max and min: any exactly representable value.
// Values depend on the rank and on the element index modulo a prime, so a block that lands at the
// wrong place or a rank's missing contribution shows up in the result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "slimeccl.h"

namespace slimeccl_perf {

// Element indices repeat their values after this many elements (a prime, so blocks of
// power-of-two sizes never line up with it).
inline constexpr uint64_t kReductionValuePeriod = 65521;

// Element `index` of rank `rank`'s input to `op` over `nranks` ranks.
uint64_t reductionInputValue(slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t index);

// Elements [0, count) of `buffer` get rank `rank`'s input from element `firstIndex` on.
void fillReductionInput(void* buffer, slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t count,
                        size_t firstIndex = 0);

// Elements [0, count) of `buffer` get the reduction of every rank's input from element `firstIndex` on.
// avg is the sum divided by nranks as the library defines it: truncating division for integers; for
// floating types the (exact) sum divided in the type's arithmetic, in float and rounded back for half
// and bfloat16.
void fillReductionResult(void* buffer, slimecclDataType_t type, slimecclRedOp_t op, int nranks, size_t count,
                         size_t firstIndex = 0);

}  // namespace slimeccl_perf
