// The header that opens a session's first message: the sender's descriptor, whole, or for an
// eager Send carried entirely in its header, an 8-byte short form. A small message pays for every
// byte it adds on a slow link (soft-RoCE checksums each one in software), and the receiver of a
// Send needs only the sender's rank, that it is a Send, and its size: the rest of the message.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/exec/plan.h"

namespace slimeccl {

struct ShortDesc {
  uint16_t magic;
  uint8_t coll;
  uint8_t reserved;
  int32_t rank;
};
static_assert(sizeof(ShortDesc) == 8);
constexpr uint16_t kShortDescMagic = 0x5053;  // "SP"; unlike the first two bytes of kOpDescMagic

// The header's size for a session that sends the short form (shortForm) or the whole descriptor.
constexpr size_t headerBytes(bool shortForm) { return shortForm ? sizeof(ShortDesc) : sizeof(OpDesc); }
// Writes desc as a header at out; returns its size.
size_t writeHeader(const OpDesc& desc, bool shortForm, char* out);
// The short form of a call of `rank` (what writeHeader writes from its descriptor).
size_t writeShortHeader(Coll coll, int rank, char* out);
// Whether a message of `size` bytes is the short header of `peer`'s Send of `bytes`: a Recv's
// usual case, checked without building descriptors.
bool isShortSend(const char* in, size_t size, int peer, size_t bytes);
// Reads the header of a received message of `size` bytes into *desc and returns the header's size.
// A short header describes a P2P call of the bytes that follow it. A message that starts with
// neither form gives a descriptor without its magic (which checkPeerDesc reports) and 0.
size_t readHeader(const char* in, size_t size, OpDesc* desc);

}  // namespace slimeccl
