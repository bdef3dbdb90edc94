// Single copy between the address spaces of two ranks on one host: the receiver reads the sender's
// buffer straight into its own with process_vm_readv, or with memcpy when both ranks are threads
// of one process. Used by the shm module for large messages instead of the two copies of a FIFO.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimeccl {

// How a receiver can read a sender's memory, as decided when the connection is accepted.
enum class SingleCopyMode : uint32_t {
  Unknown = 0,      // not decided yet: the sender uses the FIFO
  CrossMemory = 1,  // process_vm_readv
  SameProcess = 2,  // memcpy: both ends share one address space
  Refused = 3,      // the kernel refused process_vm_readv: the FIFO carries everything
  Off = 4,          // SLIMECCL_SHM_SINGLE_COPY=0: the FIFO carries everything
};

const char* singleCopyModeName(SingleCopyMode mode);

// A word in the sender's memory that the receiver reads once at accept time to learn whether the
// kernel lets it (ptrace access mode, Yama scope, same uid, seccomp); its value is fixed.
const uint64_t* singleCopyProbeWord();
constexpr uint64_t kSingleCopyProbeValue = 0x534c5052'4f424531ull;

// Tries a tiny read of the probe at probeAddress in process pid; on refusal, why is set.
SingleCopyMode probeSingleCopy(pid_t pid, uint64_t probeAddress, std::string* why);

// Copies len bytes from remote (in process pid) to local, looping over partial transfers and
// cutting the range into pieces of at most maxPieceBytes (the kernel moves at most about 2 GiB per
// call). Returns the bytes copied; when short, *err holds the errno that stopped it. streaming:
// a copy inside one process uses streaming stores (the kernel's copy has no such choice).
size_t copyFromPeer(SingleCopyMode mode, pid_t pid, uint64_t remote, void* local, size_t len, size_t maxPieceBytes,
                    bool streaming, int* err);

}  // namespace slimeccl
