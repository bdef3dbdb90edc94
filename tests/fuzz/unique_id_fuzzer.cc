// The unique-id decoder on arbitrary bytes (cut or zero-padded to the id's 128 bytes). An id it
// accepts holds a usable root address and survives a round trip through the encoder.
#include <cstring>

#include "src/bootstrap/unique_id.h"
#include "src/base/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace slimeccl;

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  slimecclUniqueId id;
  memset(&id, 0, sizeof(id));
  memcpy(id.internal, data, size < sizeof(id.internal) ? size : sizeof(id.internal));

  UniqueIdContents decoded{};
  clearThreadError();
  slimecclResult_t rc = decodeUniqueId(id, &decoded);
  if (rc != slimecclSuccess) {
    FUZZ_REQUIRE(rc == slimecclInvalidArgument && !threadError().empty(),
                 "a rejected id is not an InvalidArgument with a sentence");
    return 0;
  }
  FUZZ_REQUIRE(decoded.root.valid() && decoded.root.port() != 0, "an id without a usable root address passed");
  FUZZ_REQUIRE(!decoded.root.toString().empty(), "the root address does not print");

  slimecclUniqueId again;
  encodeUniqueId(decoded, &again);
  UniqueIdContents twice{};
  FUZZ_REQUIRE(decodeUniqueId(again, &twice) == slimecclSuccess, "a re-encoded id does not decode");
  FUZZ_REQUIRE(twice.root.toString() == decoded.root.toString(), "the root address changed in a round trip");
  FUZZ_REQUIRE(memcmp(twice.secret.bytes, decoded.secret.bytes, kSecretBytes) == 0,
               "the secret changed in a round trip");
  FUZZ_REQUIRE(twice.rootAtRankZero == decoded.rootAtRankZero, "the root flag changed in a round trip");
  return 0;
}
