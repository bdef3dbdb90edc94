#include "net/shm/peer_mappings.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace slimeccl {
namespace {

// Bounds what one connection keeps mapped; the least recently used mapping goes first.
constexpr size_t kMaxMappings = 64;

const SharedAllocHeader* headerOf(const char* base) { return reinterpret_cast<const SharedAllocHeader*>(base); }

bool freedByOwner(const char* base) { return __atomic_load_n(&headerOf(base)->freed, __ATOMIC_ACQUIRE) != 0; }

}  // namespace

PeerMappings::~PeerMappings() {
  for (const Mapping& m : mappings_) munmap(const_cast<char*>(m.base), m.bytes);
}

void PeerMappings::dropFreed() {
  std::erase_if(mappings_, [](const Mapping& m) {
    if (!freedByOwner(m.base)) return false;
    munmap(const_cast<char*>(m.base), m.bytes);
    return true;
  });
}

void PeerMappings::dropLeastRecent() {
  auto oldest = std::min_element(mappings_.begin(), mappings_.end(),
                                 [](const Mapping& a, const Mapping& b) { return a.lastUse < b.lastUse; });
  munmap(const_cast<char*>(oldest->base), oldest->bytes);
  mappings_.erase(oldest);
}

const char* PeerMappings::mapFile(pid_t pid, const SharedAllocPlace& place, std::string* why) {
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, place.fd);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("cannot open {}: {}", path, strerror(errno));
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != place.fileBytes) {
    *why = fmt::format("{} is not the allocation described (size {}, expected {})", path, st.st_size, place.fileBytes);
    close(fd);
    return nullptr;
  }
  void* base = mmap(nullptr, place.fileBytes, PROT_READ, MAP_SHARED, fd, 0);
  int mapErrno = errno;
  close(fd);
  if (base == MAP_FAILED) {
    *why = fmt::format("cannot map {}: {}", path, strerror(mapErrno));
    return nullptr;
  }
  const char* bytes = static_cast<const char*>(base);
  const SharedAllocHeader* head = headerOf(bytes);
  if (head->magic != kSharedAllocMagic || !(head->id == place.id) || freedByOwner(bytes)) {
    *why = fmt::format("{} holds another allocation than the one described", path);
    munmap(base, place.fileBytes);
    return nullptr;
  }
  return bytes;
}

const char* PeerMappings::find(pid_t pid, const SharedAllocPlace& place, size_t len, std::string* why) {
  if (place.offset > place.fileBytes || len > place.fileBytes - place.offset) {
    *why = fmt::format("the range of {} bytes at offset {} overruns the allocation of {} bytes", len, place.offset,
                       place.fileBytes);
    return nullptr;
  }
  dropFreed();
  ++uses_;
  for (Mapping& m : mappings_) {
    if (m.id == place.id && m.bytes == place.fileBytes) {
      m.lastUse = uses_;
      return m.base + place.offset;
    }
  }
  const char* base = mapFile(pid, place, why);
  if (base == nullptr) return nullptr;
  if (mappings_.size() >= kMaxMappings) dropLeastRecent();
  mappings_.push_back(Mapping{place.id, base, place.fileBytes, uses_});
  return base + place.offset;
}

}  // namespace slimeccl
