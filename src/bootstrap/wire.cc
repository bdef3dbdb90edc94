#include "src/bootstrap/wire.h"

#include "src/error.h"

namespace slimeccl {

slimecclResult_t validateHeader(const WireHeader& h, WireType expected, uint32_t expectedLength) {
  if (h.magic != kWireMagic)
    return fail(slimecclRemoteError, "bootstrap: a message with a bad magic number arrived (not a slimeccl peer?)");
  if (h.type != static_cast<uint32_t>(expected))
    return fail(slimecclRemoteError, "bootstrap: expected message type {}, got {}", static_cast<uint32_t>(expected),
                h.type);
  if (h.length != expectedLength)
    return fail(slimecclRemoteError, "bootstrap: message type {} has length {}, expected {}", h.type, h.length,
                expectedLength);
  return slimecclSuccess;
}

slimecclResult_t validateRootError(const WireHeader& h) {
  if (h.magic != kWireMagic || h.type != static_cast<uint32_t>(WireType::RootError))
    return fail(slimecclRemoteError, "bootstrap: malformed error message from the root");
  if (h.length < sizeof(int32_t) || h.length > sizeof(int32_t) + kMaxErrorText)
    return fail(slimecclRemoteError, "bootstrap: the root's error message has an invalid length {}", h.length);
  return slimecclSuccess;
}

}  // namespace slimeccl
