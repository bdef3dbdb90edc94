#include "src/base/sys/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace slimeccl {

#if defined(__x86_64__)

void copyStreaming(void* dst, const void* src, size_t n) {
  if (n == 0) return;  // an empty range may come with null pointers, which memcpy must not see
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  // Streaming stores need 16-byte aligned destinations: copy the head up to that boundary plainly.
  size_t head = (16 - (reinterpret_cast<uintptr_t>(to) & 15)) & 15;
  if (head > n) head = n;
  memcpy(to, from, head);
  size_t at = head;
  for (; at + 64 <= n; at += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 32));
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 48), d);
  }
  // Non-temporal stores are weakly ordered: fence them before anyone is told the copy is done.
  _mm_sfence();
  memcpy(to + at, from + at, n - at);
}

#else

void copyStreaming(void* dst, const void* src, size_t n) { memcpy(dst, src, n); }

#endif

}  // namespace slimeccl
