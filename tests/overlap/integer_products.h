// The exact result of GemmReduceScatter on integer-valued matrices: rank `rank`'s rows of op over
// the ranks of (A_q x B_q), computed in integers, for the host and the device tests alike.
#pragma once

#include <slimeccl.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace slimeccl_test {

struct ProductShape {
  size_t mLocal, k, n;
};

// aOf(q): rank q's A, (nranks * mLocal) x k, row-major; bOf(q): its B, k x n. op: sum, max or min.
inline std::vector<long> reducedProductRows(const ProductShape& s, int rank, int nranks, slimecclRedOp_t op,
                                            const std::function<std::vector<long>(int)>& aOf,
                                            const std::function<std::vector<long>(int)>& bOf) {
  std::vector<long> c(s.mLocal * s.n);
  for (int q = 0; q < nranks; ++q) {
    const std::vector<long> a = aOf(q), b = bOf(q);
    for (size_t i = 0; i < s.mLocal; ++i)
      for (size_t j = 0; j < s.n; ++j) {
        long sum = 0;
        for (size_t x = 0; x < s.k; ++x) sum += a[(rank * s.mLocal + i) * s.k + x] * b[x * s.n + j];
        long& out = c[i * s.n + j];
        out = q == 0              ? sum
              : op == slimecclMax ? std::max(out, sum)
              : op == slimecclMin ? std::min(out, sum)
                                  : out + sum;
      }
  }
  return c;
}

}  // namespace slimeccl_test
