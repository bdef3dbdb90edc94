// Small string helpers for parsing environment variables and building sentences.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace slimeccl {

std::vector<std::string> splitList(std::string_view text, char separator);
// "0, 2, 5" for a list of ints, used in error sentences.
std::string joinInts(const std::vector<int>& values);
// 1536 -> "1.5 KiB"; exact byte counts stay in the sentence too where they matter.
std::string humanBytes(size_t bytes);
std::string toHex(const unsigned char* data, size_t len);
// Returns false if text is not exactly 2*len hex digits.
bool fromHex(std::string_view text, unsigned char* out, size_t len);

}  // namespace slimeccl
