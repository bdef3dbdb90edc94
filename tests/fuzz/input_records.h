// Several messages in one fuzz input: each record is a 16-bit little-endian length and then that
// many bytes; a record cut short by the end of the input takes what is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slimeccl::fuzz {

inline std::vector<std::string> splitRecords(const uint8_t* data, size_t size, size_t maxRecords) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at + 2 <= size && records.size() < maxRecords) {
    size_t length = data[at] | (static_cast<size_t>(data[at + 1]) << 8);
    at += 2;
    size_t take = length < size - at ? length : size - at;
    records.emplace_back(reinterpret_cast<const char*>(data + at), take);
    at += take;
  }
  return records;
}

inline void appendRecord(std::string* input, const std::string& record) {
  input->push_back(static_cast<char>(record.size() & 0xff));
  input->push_back(static_cast<char>(record.size() >> 8));
  *input += record;
}

}  // namespace slimeccl::fuzz
