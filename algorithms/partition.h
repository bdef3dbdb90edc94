// Splitting a vector of elements between ranks or steps on element boundaries.
#pragma once

#include <cstddef>

namespace slimeccl {

struct ByteBlock {
  size_t offset;  // bytes
  size_t bytes;
};

// Part i of `count` elements cut into `parts` near-equal parts (the first count % parts get one
// more element), in bytes.
inline ByteBlock partOf(size_t count, size_t typeBytes, int parts, int i) {
  size_t base = count / parts, extra = count % parts;
  size_t index = static_cast<size_t>(i);
  size_t first = index * base + (index < extra ? index : extra);
  size_t n = base + (index < extra ? 1 : 0);
  return ByteBlock{first * typeBytes, n * typeBytes};
}

// Parts i .. i+n-1 together (contiguous).
inline ByteBlock partsOf(size_t count, size_t typeBytes, int parts, int i, int n) {
  ByteBlock a = partOf(count, typeBytes, parts, i);
  ByteBlock b = partOf(count, typeBytes, parts, i + n - 1);
  return ByteBlock{a.offset, b.offset + b.bytes - a.offset};
}

}  // namespace slimeccl
