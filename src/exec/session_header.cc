#include "src/exec/session_header.h"

#include <cstring>

namespace slimeccl {

size_t writeHeader(const OpDesc& desc, bool shortForm, char* out) {
  if (!shortForm) {
    memcpy(out, &desc, sizeof(OpDesc));
    return sizeof(OpDesc);
  }
  return writeShortHeader(static_cast<Coll>(desc.coll), desc.rank, out);
}

size_t writeShortHeader(Coll coll, int rank, char* out) {
  ShortDesc header{kShortDescMagic, static_cast<uint8_t>(coll), 0, rank};
  memcpy(out, &header, sizeof(header));
  return sizeof(header);
}

bool isShortSend(const char* in, size_t size, int peer, size_t bytes) {
  if (size != sizeof(ShortDesc) + bytes) return false;
  ShortDesc header;
  memcpy(&header, in, sizeof(header));
  return header.magic == kShortDescMagic && header.coll == static_cast<uint8_t>(Coll::Send) && header.rank == peer;
}

size_t readHeader(const char* in, size_t size, OpDesc* desc) {
  memset(desc, 0, sizeof(*desc));
  uint32_t magic = 0;
  if (size >= sizeof(magic)) memcpy(&magic, in, sizeof(magic));
  if (magic == kOpDescMagic && size >= sizeof(OpDesc)) {
    memcpy(desc, in, sizeof(OpDesc));
    return sizeof(OpDesc);
  }
  ShortDesc header{};
  if (size < sizeof(header)) return 0;
  memcpy(&header, in, sizeof(header));
  if (header.magic != kShortDescMagic) return 0;
  desc->magic = kOpDescMagic;
  desc->isP2P = 1;
  desc->coll = header.coll;
  desc->rank = header.rank;
  desc->bytes = size - sizeof(header);
  return sizeof(header);
}

}  // namespace slimeccl
