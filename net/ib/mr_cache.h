// Registration cache for user buffers: a buffer is registered once (whole pages) and reused by
// later messages that fall inside it; the least recently used idle registrations go first when
// the cache is full. Registrations whose memory is unmapped, moved or discarded (MemoryMonitor)
// are dropped, so memory freed and reallocated at the same address is registered afresh. Where
// the monitor cannot watch a buffer, its registration lives only as long as the message.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "include/slimeccl.h"
#include "net/ib/mem_monitor.h"
#include "net/net.h"

namespace slimeccl {

// Registers memory with a device; an interface so that tests can stand in for the device.
class Registrar {
 public:
  virtual ~Registrar() = default;
  // Registers [start, start + len) for local access and, when it can, remote writes (*remoteWrite
  // says whether it did; it must when *remoteWrite comes in true). nullptr with errno on failure.
  virtual void* reg(uintptr_t start, size_t len, bool* remoteWrite, uint32_t* lkey, uint32_t* rkey) = 0;
  // Registers `len` bytes of the dmabuf `fd` from `offset`, addressed as [iova, iova + len), for
  // local and remote writes. nullptr with errno on failure.
  virtual void* regDmabuf(uintptr_t iova, size_t len, int fd, uint64_t offset, uint32_t* lkey, uint32_t* rkey) = 0;
  virtual void dereg(void* handle) = 0;
};

class VerbsRegistrar final : public Registrar {
 public:
  explicit VerbsRegistrar(ibv_pd* pd) : pd_(pd) {}
  void* reg(uintptr_t start, size_t len, bool* remoteWrite, uint32_t* lkey, uint32_t* rkey) override;
  void* regDmabuf(uintptr_t iova, size_t len, int fd, uint64_t offset, uint32_t* lkey, uint32_t* rkey) override;
  void dereg(void* handle) override;

 private:
  ibv_pd* pd_;
};

// A buffer's keys while a message uses it.
struct MrRef {
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  void* entry = nullptr;
};

class MrCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t registrations = 0;
    uint64_t invalidations = 0;
    uint64_t evictions = 0;
  };

  // monitor == nullptr: nothing is kept (every message registers its buffer). The default takes
  // the process's monitor.
  MrCache(std::unique_ptr<Registrar> registrar, size_t maxEntries);
  MrCache(std::unique_ptr<Registrar> registrar, size_t maxEntries, MemoryMonitor* monitor);
  ~MrCache();

  // Keys for [data, data + size), registered for remote writes when remoteWrite; hold them until
  // release(). Fails with SystemError and a sentence when the device refuses the memory.
  slimecclResult_t acquire(const void* data, size_t size, bool remoteWrite, MrRef* out);
  // The same for device memory (GPUDirect RDMA), registered by `route` for the one message: the
  // unmap monitor cannot see GPU memory freed and allocated again, so nothing is kept.
  slimecclResult_t acquireDevice(const void* data, size_t size, const DeviceMemoryAccess& memory,
                                 DeviceMemoryRoute route, MrRef* out);
  void release(MrRef* ref);
  Stats stats();
  size_t entries();

 private:
  struct Entry {
    uintptr_t start;
    uintptr_t end;
    bool remoteWrite;
    void* handle;
    uint32_t lkey;
    uint32_t rkey;
    int users = 0;
    bool watched = false;
    bool stale = false;
  };
  using Entries = std::list<Entry>;

  void applyChanges();
  void drop(Entries::iterator it);
  void evictOverLimit();
  void evictIdle();

  std::mutex mutex_;
  std::unique_ptr<Registrar> registrar_;
  size_t maxEntries_;
  MemoryMonitor* monitor_;
  MemoryMonitor::Cursor cursor_;
  Entries entries_;  // most recently used first
  Stats stats_;
};

}  // namespace slimeccl
