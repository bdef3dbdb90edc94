#include "net/bell.h"

#include <sys/mman.h>
#include <unistd.h>

#include "src/base/sys/futex.h"

namespace slimeccl {
namespace {
constexpr size_t kBellBytes = 4096;

BellWord* mapBell(int fd) {
  void* p = mmap(nullptr, kBellBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<BellWord*>(p);
}
}  // namespace

Bell* Bell::create() {
  int fd = memfd_create("slimeccl-bell", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (ftruncate(fd, kBellBytes) != 0) {
    close(fd);
    return nullptr;
  }
  BellWord* word = mapBell(fd);
  if (word == nullptr) {
    close(fd);
    return nullptr;
  }
  return new Bell(fd, word);
}

Bell* Bell::attach(int fd) {
  BellWord* word = mapBell(fd);
  if (word == nullptr) {
    close(fd);
    return nullptr;
  }
  return new Bell(fd, word);
}

Bell::~Bell() {
  if (fd_ < 0) return;
  munmap(word_, kBellBytes);
  close(fd_);
}

void Bell::wake() {
  word_->seq.fetch_add(1, std::memory_order_seq_cst);
  futexWakeAll(&word_->seq);
}

void Bell::sleepOn(uint32_t seen, int timeoutMs) { futexWait(&word_->seq, seen, timeoutMs); }

}  // namespace slimeccl
