#include "net/ib/mr_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"

namespace slimeccl {
namespace {

uintptr_t pageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

void* VerbsRegistrar::reg(uintptr_t start, size_t len, bool* remoteWrite, uint32_t* lkey, uint32_t* rkey) {
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  ibv_mr* mr = ibv_reg_mr(pd_, reinterpret_cast<void*>(start), len, access);
  // Read-only memory can still be sent from.
  if (mr == nullptr && !*remoteWrite && (errno == EFAULT || errno == EACCES || errno == EPERM)) {
    mr = ibv_reg_mr(pd_, reinterpret_cast<void*>(start), len, 0);
    if (mr == nullptr) return nullptr;
    *lkey = mr->lkey;
    *rkey = mr->rkey;
    return mr;
  }
  if (mr == nullptr) return nullptr;
  *remoteWrite = true;
  *lkey = mr->lkey;
  *rkey = mr->rkey;
  return mr;
}

void* VerbsRegistrar::regDmabuf(uintptr_t iova, size_t len, int fd, uint64_t offset, uint32_t* lkey, uint32_t* rkey) {
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd_, offset, len, iova, fd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (mr == nullptr) return nullptr;
  *lkey = mr->lkey;
  *rkey = mr->rkey;
  return mr;
}

void VerbsRegistrar::dereg(void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); }

MrCache::MrCache(std::unique_ptr<Registrar> registrar, size_t maxEntries)
    : MrCache(std::move(registrar), maxEntries, maxEntries > 0 ? MemoryMonitor::instance() : nullptr) {}

MrCache::MrCache(std::unique_ptr<Registrar> registrar, size_t maxEntries, MemoryMonitor* monitor)
    : registrar_(std::move(registrar)), maxEntries_(monitor != nullptr ? maxEntries : 0), monitor_(monitor) {}

MrCache::~MrCache() {
  for (Entry& e : entries_) registrar_->dereg(e.handle);
}

void MrCache::applyChanges() {
  if (monitor_ == nullptr) return;
  monitor_->collect(&cursor_, [this](uintptr_t start, uintptr_t end) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      auto next = std::next(it);
      if (!it->stale && it->start < end && start < it->end) {
        it->stale = true;
        ++stats_.invalidations;
        if (it->users == 0) drop(it);
      }
      it = next;
    }
  });
}

// Deregisters an idle entry; stops watching its pages unless another entry still covers them.
void MrCache::drop(Entries::iterator it) {
  registrar_->dereg(it->handle);
  if (it->watched && !it->stale) {
    bool shared = false;
    for (const Entry& e : entries_) shared |= &e != &*it && e.watched && e.start < it->end && it->start < e.end;
    if (!shared) monitor_->unwatch(it->start, it->end);
  }
  entries_.erase(it);
}

void MrCache::evictOverLimit() {
  auto it = entries_.end();
  while (entries_.size() > maxEntries_ && it != entries_.begin()) {
    --it;
    if (it->users != 0) continue;
    auto victim = it++;
    drop(victim);
    ++stats_.evictions;
  }
}

void MrCache::evictIdle() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->users == 0) {
      drop(it);
      ++stats_.evictions;
    }
    it = next;
  }
}

slimecclResult_t MrCache::acquire(const void* data, size_t size, bool remoteWrite, MrRef* out) {
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t finish = begin + (size == 0 ? 1 : size);
  std::lock_guard<std::mutex> lock(mutex_);
  applyChanges();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->stale || it->start > begin || it->end < finish || (remoteWrite && !it->remoteWrite)) continue;
    entries_.splice(entries_.begin(), entries_, it);
    ++it->users;
    ++stats_.hits;
    *out = MrRef{it->lkey, it->rkey, &*it};
    return slimecclSuccess;
  }
  uintptr_t start = begin & ~(pageSize() - 1);
  uintptr_t end = (finish + pageSize() - 1) & ~(pageSize() - 1);
  Entry e{start, end, remoteWrite, nullptr, 0, 0};
  e.handle = registrar_->reg(start, end - start, &e.remoteWrite, &e.lkey, &e.rkey);
  if (e.handle == nullptr && errno == ENOMEM && !entries_.empty()) {
    // Pinned-memory limit: give back what idle registrations hold and try once more.
    evictIdle();
    e.handle = registrar_->reg(start, end - start, &e.remoteWrite, &e.lkey, &e.rkey);
  }
  if (e.handle == nullptr)
    return fail(slimecclSystemError, "ib: cannot register {} bytes at {} with the device: {}{}", size, data,
                strerror(errno), errno == ENOMEM ? " (is the locked-memory limit, ulimit -l, too low?)" : "");
  ++stats_.registrations;
  e.users = 1;
  e.watched = maxEntries_ > 0 && monitor_->watch(start, end);
  entries_.push_front(e);
  *out = MrRef{e.lkey, e.rkey, &entries_.front()};
  evictOverLimit();
  return slimecclSuccess;
}

slimecclResult_t MrCache::acquireDevice(const void* data, size_t size, const DeviceMemoryAccess& memory,
                                        DeviceMemoryRoute route, MrRef* out) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t start = begin & ~(pageSize() - 1);
  const uintptr_t end = (begin + (size == 0 ? 1 : size) + pageSize() - 1) & ~(pageSize() - 1);
  Entry e{start, end, true, nullptr, 0, 0};
  if (route == DeviceMemoryRoute::Dmabuf) {
    int fd = -1;
    uint64_t offset = 0;
    if (memory.dmabufOf(start, end - start, &fd, &offset) != slimecclSuccess) {
      prefixThreadError(fmt::format("ib: registering {} bytes of GPU memory at {}: ", size, data));
      return slimecclSystemError;
    }
    e.handle = registrar_->regDmabuf(start, end - start, fd, offset, &e.lkey, &e.rkey);
    const int err = errno;
    close(fd);
    errno = err;
  } else {
    e.handle = registrar_->reg(start, end - start, &e.remoteWrite, &e.lkey, &e.rkey);
  }
  if (e.handle == nullptr)
    return fail(slimecclSystemError, "ib: the device refused {} bytes of GPU memory at {} (registered by {}): {}", size,
                data, deviceMemoryRouteName(route), strerror(errno));
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.registrations;
  e.users = 1;
  entries_.push_front(e);
  *out = MrRef{e.lkey, e.rkey, &entries_.front()};
  return slimecclSuccess;
}

void MrCache::release(MrRef* ref) {
  if (ref->entry == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it != ref->entry) continue;
    if (--it->users == 0 && (it->stale || !it->watched)) drop(it);
    break;
  }
  ref->entry = nullptr;
}

MrCache::Stats MrCache::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

size_t MrCache::entries() {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace slimeccl
