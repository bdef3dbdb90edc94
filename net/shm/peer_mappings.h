// A receiver's mappings of its sender's shared allocations (slimecclMemAlloc): a pulled message
// whose source lies in one is copied with memcpy from the mapping instead of process_vm_readv.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/base/sys/shared_alloc.h"

namespace slimeccl {

class PeerMappings {
 public:
  PeerMappings() = default;
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;
  ~PeerMappings();

  // len bytes of process pid's allocation at place, mapped here; nullptr with *why set when they
  // cannot be (no access to the peer's descriptors, or the file is not the allocation named).
  const char* find(pid_t pid, const SharedAllocPlace& place, size_t len, std::string* why);

  size_t size() const { return mappings_.size(); }

 private:
  struct Mapping {
    SharedAllocId id;
    const char* base;
    size_t bytes;
    uint64_t lastUse;
  };
  // Unmaps the files their owner has freed since, so they do not stay alive through this mapping.
  void dropFreed();
  void dropLeastRecent();
  const char* mapFile(pid_t pid, const SharedAllocPlace& place, std::string* why);

  std::vector<Mapping> mappings_;
  uint64_t uses_ = 0;
};

}  // namespace slimeccl
