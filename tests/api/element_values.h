// Small integers stored as elements of any datatype, and elements printed for failure messages.
#pragma once

#include <slimeccl.h>

#include <cstdint>
#include <string>

namespace slimeccl_test {

// Writes `value` as one element of `datatype`. The value must be exactly representable (every
// integer of magnitude up to 256 is, in all ten datatypes), so the bits are the only right ones.
void storeValue(slimecclDataType_t datatype, int64_t value, void* element);

// One element as text, e.g. "-3" or "7 (0x4700)" for 16-bit floats, whose bits are shown too.
std::string elementText(slimecclDataType_t datatype, const void* element);

bool isUnsignedInteger(slimecclDataType_t datatype);
bool isFloatingPoint(slimecclDataType_t datatype);

}  // namespace slimeccl_test
