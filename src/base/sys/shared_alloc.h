// Host memory that other processes on the host can map: slimecclMemAlloc hands out such buffers
// (each one a memfd, mapped shared), so that a peer can copy from them with memcpy instead of
// process_vm_readv. This file keeps the process's live allocations and describes an address range
// that lies in one of them, so that a peer can find and check the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimeccl {

// Identifies one allocation for as long as the host runs: a random nonce per process and a serial
// number per allocation, so neither a reused address nor a reused pid can stand for another one.
struct SharedAllocId {
  uint64_t nonce = 0;
  uint64_t serial = 0;
  bool operator==(const SharedAllocId&) const = default;
};

// The first page of every allocation's memfd; the user's bytes follow it.
struct SharedAllocHeader {
  uint64_t magic;
  SharedAllocId id;
  uint64_t userBytes;
  uint32_t freed;  // set (atomically) by slimecclMemFree before the owner unmaps it
};
constexpr uint64_t kSharedAllocMagic = 0x534c4d4d'414c4f43ull;

// Where a range of the owner's memory lies: the owner's memfd (its fd number in the owner), the
// range's offset in that file, and the file's size.
struct SharedAllocPlace {
  int32_t fd = -1;
  uint64_t offset = 0;
  uint64_t fileBytes = 0;
  SharedAllocId id;
};

// The size of the header page in front of the user's bytes.
size_t sharedAllocHeaderBytes();

// Allocates bytes of shared memory; nullptr with *why set when the system refuses.
void* sharedAlloc(size_t bytes, std::string* why);
// Frees an allocation made by sharedAlloc; false when ptr is not the start of a live one.
bool sharedFree(void* ptr);
// True and *place filled when [ptr, ptr + len) lies inside one live allocation.
bool findSharedAlloc(const void* ptr, size_t len, SharedAllocPlace* place);

}  // namespace slimeccl
