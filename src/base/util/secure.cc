#include "src/base/util/secure.h"

#include <sys/random.h>

#include <cerrno>

namespace slimeccl {

bool randomBytes(void* out, size_t len) {
  auto* p = static_cast<unsigned char*>(out);
  size_t got = 0;
  while (got < len) {
    ssize_t n = getrandom(p + got, len - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

bool equalConstantTime(const void* a, const void* b, size_t len) {
  const volatile unsigned char* x = static_cast<const volatile unsigned char*>(a);
  const volatile unsigned char* y = static_cast<const volatile unsigned char*>(b);
  unsigned char diff = 0;
  for (size_t i = 0; i < len; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

}  // namespace slimeccl
