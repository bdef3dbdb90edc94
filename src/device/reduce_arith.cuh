// The arithmetic of the GPU reductions, shared by their kernels: how each element type is stored
// and computed, the operators, avg's division and PreMulSum's product (the rules are
// src/device/reduce_kernel.h's). CUDA only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace slimeccl {

// How an element type is stored and computed: the 16-bit floats in float.
template <typename T>
struct Arith {
  using Stored = T;
  using Computed = T;
  __device__ static Computed widen(Stored s) { return s; }
  __device__ static Stored narrow(Computed c) { return c; }
};
struct Half {};
struct Bfloat16 {};
template <>
struct Arith<Half> {
  using Stored = unsigned short;
  using Computed = float;
  __device__ static float widen(Stored s) { return __half2float(__ushort_as_half(s)); }
  __device__ static Stored narrow(float c) { return __half_as_ushort(__float2half_rn(c)); }
};
template <>
struct Arith<Bfloat16> {
  using Stored = unsigned short;
  using Computed = float;
  __device__ static float widen(Stored s) { return __bfloat162float(__ushort_as_bfloat16(s)); }
  __device__ static Stored narrow(float c) { return __bfloat16_as_ushort(__float2bfloat16_rn(c)); }
};

// Integer sums and products wrap: computed on the unsigned type of the same width.
// Floats multiply and add with the rounding intrinsics: the compiler may not fuse a PreMulSum's
// product with the sum after it into one multiply-add, which rounds once where the host rounds twice.
template <typename C>
__device__ C wrapping(C a, C b, bool multiply) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(multiply ? static_cast<U>(a) * static_cast<U>(b) : static_cast<U>(a) + static_cast<U>(b));
  } else if constexpr (std::is_same_v<C, double>) {
    return multiply ? __dmul_rn(a, b) : __dadd_rn(a, b);
  } else {
    return multiply ? __fmul_rn(a, b) : __fadd_rn(a, b);
  }
}

struct SumOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    return wrapping(a, b, false);
  }
};
struct ProdOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    return wrapping(a, b, true);
  }
};
// A NaN operand wins on either side (a != a only for NaN), as on the host.
struct MaxOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    return (a > b || a != a) ? a : b;
  }
};
struct MinOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    return (a < b || a != a) ? a : b;
  }
};

template <typename E, typename Op>
__device__ typename Arith<E>::Stored combine(typename Arith<E>::Stored a, typename Arith<E>::Stored b) {
  return Arith<E>::narrow(Op::apply(Arith<E>::widen(a), Arith<E>::widen(b)));
}

// avg's last step; integers divide as numbers, truncating.
template <typename E>
__device__ typename Arith<E>::Stored divide(typename Arith<E>::Stored s, int divisor) {
  using C = typename Arith<E>::Computed;
  const C v = Arith<E>::widen(s);
  if constexpr (std::is_integral_v<C>) {
    using Q = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
    return Arith<E>::narrow(static_cast<C>(static_cast<Q>(v) / static_cast<Q>(divisor)));
  } else {
    return Arith<E>::narrow(v / static_cast<C>(divisor));
  }
}

// A PreMulSum's first step on one element: the input times its rank's scalar.
template <typename E>
__device__ typename Arith<E>::Stored premultiply(typename Arith<E>::Stored s, typename Arith<E>::Stored scalar) {
  return combine<E, ProdOp>(scalar, s);
}

}  // namespace slimeccl
