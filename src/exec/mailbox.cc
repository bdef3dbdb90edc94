#include "src/exec/mailbox.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/error.h"
#include "src/util/hash.h"

namespace slimeccl {
namespace {

struct SegmentHeader {
  alignas(64) std::atomic<uint32_t> attached;
  alignas(64) BellWord bell;
};

size_t roundUp64(size_t v) { return (v + 63) / 64 * 64; }

}  // namespace

// Named from the secret, which every rank of the comm (and no one else) holds; two hashes with
// different seeds make the name as unlikely to collide as a 128-bit random one.
std::string Mailbox::nameFor(const uint8_t* secret, size_t secretBytes) {
  return fmt::format("/slimeccl-slots-{:016x}{:016x}", fnv1a64(secret, secretBytes),
                     fnv1a64(secret, secretBytes, 0x9e3779b97f4a7c15ULL));
}

slimecclResult_t Mailbox::attach(const uint8_t* secret, size_t secretBytes, int rank, int nranks,
                                 std::unique_ptr<Mailbox>* out) {
  std::unique_ptr<Mailbox> box(new Mailbox);
  box->name_ = nameFor(secret, secretBytes);
  box->slotBytes_ = sizeof(MailboxHead) + kMailboxCapacity + roundUp64(sizeof(MailboxEntry) * static_cast<size_t>(nranks));
  box->mapBytes_ = sizeof(SegmentHeader) + box->slotBytes_ * 2 * static_cast<size_t>(nranks);
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
  box->map_ = map;
  auto* header = static_cast<SegmentHeader*>(map);
  box->slots_ = static_cast<char*>(map) + sizeof(SegmentHeader);
  box->bell_.reset(Bell::over(&header->bell));
  if (header->attached.fetch_add(1) + 1 == static_cast<uint32_t>(nranks)) shm_unlink(box->name_.c_str());
  *out = std::move(box);
  return slimecclSuccess;
}

Mailbox::~Mailbox() {
  bell_.reset();
  if (map_ != nullptr) munmap(map_, mapBytes_);
}

MailboxHead* Mailbox::slot(int rank, uint64_t seq) const {
  size_t index = static_cast<size_t>(rank) * 2 + (seq & 1);
  return reinterpret_cast<MailboxHead*>(slots_ + index * slotBytes_);
}

}  // namespace slimeccl
