#include "src/bootstrap/unique_id.h"

#include <cstring>
#include <string>

#include "src/base/error.h"
#include "src/base/param.h"
#include "src/base/util/hash.h"
#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

constexpr uint32_t kIdMagic = 0x534c4944;  // "SLID"
constexpr uint16_t kIdVersion = 1;
constexpr uint8_t kFlagRootAtRankZero = 1;

struct UniqueIdWire {
  uint32_t magic;
  uint16_t version;
  uint8_t flags;
  uint8_t reserved;
  SockAddr root;
  CommSecret secret;
};
static_assert(sizeof(UniqueIdWire) <= SLIMECCL_UNIQUE_ID_BYTES);

}  // namespace

void encodeUniqueId(const UniqueIdContents& contents, slimecclUniqueId* id) {
  memset(id, 0, sizeof(*id));
  UniqueIdWire wire{};
  wire.magic = kIdMagic;
  wire.version = kIdVersion;
  wire.flags = contents.rootAtRankZero ? kFlagRootAtRankZero : 0;
  wire.root = contents.root;
  wire.secret = contents.secret;
  memcpy(id->internal, &wire, sizeof(wire));
}

slimecclResult_t decodeUniqueId(const slimecclUniqueId& id, UniqueIdContents* out) {
  UniqueIdWire wire;
  memcpy(&wire, id.internal, sizeof(wire));
  if (wire.magic != kIdMagic)
    return fail(slimecclInvalidArgument, "the unique id was not made by slimecclGetUniqueId (bad magic)");
  if (wire.version != kIdVersion)
    return fail(slimecclInvalidArgument, "the unique id has version {}, this library reads version {}", wire.version,
                kIdVersion);
  if (!wire.root.valid() || wire.root.port() == 0)
    return fail(slimecclInvalidArgument, "the unique id holds no valid root address");
  out->root = wire.root;
  out->secret = wire.secret;
  out->rootAtRankZero = (wire.flags & kFlagRootAtRankZero) != 0;
  return slimecclSuccess;
}

slimecclResult_t uniqueIdFromEnv(const char* commId, UniqueIdContents* out) {
  slimecclResult_t rc = parseHostPort(commId, &out->root);
  if (rc != slimecclSuccess) {
    prefixThreadError("SLIMECCL_COMM_ID: ");
    return rc;
  }
  out->rootAtRankZero = true;
  memset(&out->secret, 0, sizeof(out->secret));
  std::string secret = envString("SLIMECCL_COMM_SECRET");
  if (!secret.empty()) {
    // The length first: fromHex writes size / 2 bytes.
    bool fits = secret.size() % 2 == 0 && secret.size() >= 32 && secret.size() / 2 <= kSecretBytes;
    if (fits && fromHex(secret, out->secret.bytes, secret.size() / 2)) return slimecclSuccess;
    return fail(slimecclInvalidArgument,
                "SLIMECCL_COMM_SECRET must be 32 to 64 hex digits (128 to 256 bits), got {} characters", secret.size());
  }
  // No secret given: derive one from the address so that all ranks agree; it protects nothing.
  uint64_t h = fnv1a64(commId);
  for (size_t i = 0; i < kSecretBytes; i += sizeof(h)) {
    memcpy(out->secret.bytes + i, &h, sizeof(h));
    h = fnv1a64(&h, sizeof(h), h);
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
