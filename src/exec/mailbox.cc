#include "src/exec/mailbox.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"
#include "src/base/sys/touch_pages.h"
#include "src/base/util/hash.h"

namespace slimeccl {
namespace {

struct SegmentHeader {
  alignas(64) std::atomic<uint32_t> attached;
  alignas(64) BellWord bell;
};

size_t roundUp64(size_t v) { return (v + 63) / 64 * 64; }

}  // namespace

// Two hashes of the key with different seeds: as unlikely to collide as a 128-bit random name.
std::string Mailbox::nameFor(const uint8_t* key, size_t keyBytes) {
  return fmt::format("/slimeccl-slots-{:016x}{:016x}", fnv1a64(key, keyBytes),
                     fnv1a64(key, keyBytes, 0x9e3779b97f4a7c15ULL));
}

slimecclResult_t Mailbox::attach(const uint8_t* key, size_t keyBytes, int rank, int nranks,
                                 std::unique_ptr<Mailbox>* out) {
  std::unique_ptr<Mailbox> box(new Mailbox);
  box->name_ = nameFor(key, keyBytes);
  box->capacity_ = mailboxCapacity(nranks);
  box->directoryOffset_ = roundUp64(offsetof(MailboxHead, bytes) + box->capacity_);
  box->slotBytes_ = box->directoryOffset_ + roundUp64(sizeof(MailboxEntry) * static_cast<size_t>(nranks));
  box->mapBytes_ = sizeof(SegmentHeader) + (sizeof(MailboxCall) + box->slotBytes_ * 2) * static_cast<size_t>(nranks);
  int fd = shm_open(box->name_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(slimecclSystemError, "rank {}: cannot open the shared slots {} of the comm's {} ranks: {}", rank,
                box->name_, nranks, strerror(errno));
  // Every rank sizes it (the same size): whoever maps first finds it sized.
  if (ftruncate(fd, static_cast<off_t>(box->mapBytes_)) != 0) {
    int err = errno;
    close(fd);
    return fail(slimecclSystemError, "rank {}: cannot size the shared slots {} to {} bytes: {}", rank, box->name_,
                box->mapBytes_, strerror(err));
  }
  void* map = mmap(nullptr, box->mapBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (map == MAP_FAILED)
    return fail(slimecclSystemError, "rank {}: cannot map the shared slots {}: {}", rank, box->name_, strerror(err));
  touchPages(map, box->mapBytes_);  // now rather than in the first ops that use each slot
  box->map_ = map;
  auto* header = static_cast<SegmentHeader*>(map);
  box->calls_ = reinterpret_cast<MailboxCall*>(static_cast<char*>(map) + sizeof(SegmentHeader));
  box->slots_ = reinterpret_cast<char*>(box->calls_ + nranks);
  box->bell_.reset(Bell::over(&header->bell));
  if (header->attached.fetch_add(1) + 1 == static_cast<uint32_t>(nranks)) shm_unlink(box->name_.c_str());
  *out = std::move(box);
  return slimecclSuccess;
}

Mailbox::~Mailbox() {
  bell_.reset();
  if (map_ != nullptr) munmap(map_, mapBytes_);
}

void Mailbox::announce(int rank, const OpRecord& op) {
  MailboxCall& c = calls_[rank];
  uint64_t v = c.version.load(std::memory_order_relaxed);
  c.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  c.collSeq.store(op.seq, std::memory_order_relaxed);
  c.count.store(op.count, std::memory_order_relaxed);
  c.root.store(op.root, std::memory_order_relaxed);
  c.coll.store(static_cast<uint8_t>(op.coll), std::memory_order_relaxed);
  c.type.store(static_cast<uint8_t>(op.type), std::memory_order_relaxed);
  c.redOp.store(static_cast<uint8_t>(op.redOp), std::memory_order_relaxed);
  c.version.store(v + 2, std::memory_order_release);
}

bool Mailbox::announced(int peer, OpDesc* out) const {
  const MailboxCall& c = calls_[peer];
  uint64_t before = c.version.load(std::memory_order_acquire);
  if (before == 0 || (before & 1) != 0) return false;
  *out = OpDesc{};
  out->magic = kOpDescMagic;
  out->rank = peer;
  out->seq = c.collSeq.load(std::memory_order_relaxed);
  out->count = c.count.load(std::memory_order_relaxed);
  out->root = c.root.load(std::memory_order_relaxed);
  out->coll = c.coll.load(std::memory_order_relaxed);
  out->type = c.type.load(std::memory_order_relaxed);
  out->redOp = c.redOp.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return c.version.load(std::memory_order_relaxed) == before;
}

}  // namespace slimeccl
