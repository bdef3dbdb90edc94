#include "src/base/sys/shared_alloc.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "src/base/util/secure.h"

namespace slimeccl {
namespace {

struct LiveAlloc {
  int fd;
  size_t userBytes;
  void* mapping;
  size_t mappingBytes;
  SharedAllocId id;
};

struct Registry {
  std::shared_mutex mutex;
  std::map<uintptr_t, LiveAlloc> byStart;  // keyed by the user's start address
  std::atomic<size_t> live{0};             // lets lookups skip the lock while nothing is allocated
  uint64_t nonce = 0;
  uint64_t nextSerial = 1;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

size_t sharedAllocHeaderBytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

void* sharedAlloc(size_t bytes, std::string* why) {
  const size_t header = sharedAllocHeaderBytes();
  if (bytes > SIZE_MAX - 2 * header) {
    *why = "the size is too large";
    return nullptr;
  }
  const size_t userRounded = (bytes + header - 1) / header * header;
  const size_t mappingBytes = header + userRounded;
  int fd = memfd_create("slimeccl-mem", MFD_CLOEXEC);
  if (fd < 0) {
    *why = std::string("memfd_create failed: ") + strerror(errno);
    return nullptr;
  }
  if (ftruncate(fd, static_cast<off_t>(mappingBytes)) != 0) {
    *why = std::string("ftruncate failed: ") + strerror(errno);
    close(fd);
    return nullptr;
  }
  void* mapping = mmap(nullptr, mappingBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    *why = std::string("mmap failed: ") + strerror(errno);
    close(fd);
    return nullptr;
  }
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  if (r.nonce == 0 && (!randomBytes(&r.nonce, sizeof(r.nonce)) || r.nonce == 0)) r.nonce = 1;
  SharedAllocId id{r.nonce, r.nextSerial++};
  auto* head = static_cast<SharedAllocHeader*>(mapping);
  head->magic = kSharedAllocMagic;
  head->id = id;
  head->userBytes = bytes;
  head->freed = 0;
  char* user = static_cast<char*>(mapping) + header;
  r.byStart[reinterpret_cast<uintptr_t>(user)] = LiveAlloc{fd, bytes, mapping, mappingBytes, id};
  r.live.fetch_add(1, std::memory_order_release);
  return user;
}

bool sharedFree(void* ptr) {
  Registry& r = registry();
  LiveAlloc gone;
  {
    std::unique_lock lock(r.mutex);
    auto it = r.byStart.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.byStart.end()) return false;
    gone = it->second;
    r.byStart.erase(it);
    r.live.fetch_sub(1, std::memory_order_release);
  }
  // Peers that still map this file see it freed and drop their mapping.
  std::atomic_ref<uint32_t>(static_cast<SharedAllocHeader*>(gone.mapping)->freed).store(1, std::memory_order_release);
  munmap(gone.mapping, gone.mappingBytes);
  close(gone.fd);
  return true;
}

bool findSharedAlloc(const void* ptr, size_t len, SharedAllocPlace* place) {
  Registry& r = registry();
  if (r.live.load(std::memory_order_acquire) == 0) return false;
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::shared_lock lock(r.mutex);
  auto it = r.byStart.upper_bound(address);
  if (it == r.byStart.begin()) return false;
  --it;
  const LiveAlloc& a = it->second;
  const uintptr_t start = it->first;
  if (address - start > a.userBytes || len > a.userBytes - (address - start)) return false;
  place->fd = a.fd;
  place->offset = address - reinterpret_cast<uintptr_t>(a.mapping);
  place->fileBytes = a.mappingBytes;
  place->id = a.id;
  return true;
}

}  // namespace slimeccl
