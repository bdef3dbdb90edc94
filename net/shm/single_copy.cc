#include "net/shm/single_copy.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "src/base/sys/stream_copy.h"

namespace slimeccl {
namespace {
const uint64_t probeWord = kSingleCopyProbeValue;
}  // namespace

const char* singleCopyModeName(SingleCopyMode mode) {
  switch (mode) {
    case SingleCopyMode::CrossMemory: return "process_vm_readv";
    case SingleCopyMode::SameProcess: return "memcpy (same process)";
    case SingleCopyMode::Refused: return "refused by the kernel";
    case SingleCopyMode::Off: return "off (SLIMECCL_SHM_SINGLE_COPY=0)";
    default: return "undecided";
  }
}

const uint64_t* singleCopyProbeWord() { return &probeWord; }

SingleCopyMode probeSingleCopy(pid_t pid, uint64_t probeAddress, std::string* why) {
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec remote{reinterpret_cast<void*>(probeAddress), sizeof(value)};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(sizeof(value)) && value == kSingleCopyProbeValue) return SingleCopyMode::CrossMemory;
  *why = n < 0 ? strerror(errno) : "the probe word read back wrong";
  return SingleCopyMode::Refused;
}

size_t copyFromPeer(SingleCopyMode mode, pid_t pid, uint64_t remote, void* local, size_t len, size_t maxPieceBytes,
                    bool streaming, int* err) {
  *err = 0;
  if (mode == SingleCopyMode::SameProcess) {
    if (streaming)
      copyStreaming(local, reinterpret_cast<const void*>(remote), len);
    else
      memcpy(local, reinterpret_cast<const void*>(remote), len);
    return len;
  }
  if (maxPieceBytes == 0) maxPieceBytes = len;
  size_t done = 0;
  while (done < len) {
    size_t piece = len - done < maxPieceBytes ? len - done : maxPieceBytes;
    iovec to{static_cast<char*>(local) + done, piece};
    iovec from{reinterpret_cast<void*>(remote + done), piece};
    ssize_t n = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : EFAULT;  // no progress without an error: the remote range ended
      return done;
    }
    done += static_cast<size_t>(n);  // a short read moves on from where it stopped
  }
  return done;
}

}  // namespace slimeccl
