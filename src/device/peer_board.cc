#include "src/device/peer_board.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"

namespace slimeccl {

slimecclResult_t PeerBoard::attach(const uint8_t* key, size_t keyBytes, int nranks, int flagKinds,
                                   std::unique_ptr<PeerBoard>* out) {
  std::unique_ptr<PeerBoard> board(new PeerBoard());
  board->name_ = "/slimeccl-gpu-";
  for (size_t i = 0; i < keyBytes; ++i) board->name_ += fmt::format("{:02x}", key[i]);
  board->nranks_ = nranks;
  // A row per rank for collectives, then one per ordered pair for Sends and one for Recvs; then
  // the Send and Recv rows' and the collective rows' acknowledgements and the ranks' failure
  // words; then the flags.
  const size_t rows = static_cast<size_t>(nranks) + 2 * static_cast<size_t>(nranks) * nranks;
  constexpr size_t kPage = 4096;
  const size_t pairs = static_cast<size_t>(nranks) * nranks;
  const size_t takenOffset = rows * 2 * sizeof(BoardPost);
  const size_t collTakenOffset = takenOffset + 2 * pairs * sizeof(uint64_t);
  const size_t failedOffset = collTakenOffset + pairs * sizeof(uint64_t);
  const size_t postBytes = (failedOffset + nranks * sizeof(uint32_t) + kPage - 1) / kPage * kPage;
  board->flagBytes_ = (static_cast<size_t>(flagKinds) * nranks * nranks * sizeof(uint32_t) + kPage - 1) / kPage * kPage;
  board->mapBytes_ = postBytes + board->flagBytes_;
  int fd = shm_open(board->name_.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) return fail(slimecclSystemError, "cannot open the GPU board {}: {}", board->name_, strerror(errno));
  // Every rank sets the same size; the pages start zeroed, so no post reads as published.
  if (ftruncate(fd, static_cast<off_t>(board->mapBytes_)) != 0) {
    int err = errno;
    close(fd);
    return fail(slimecclSystemError, "cannot size the GPU board {}: {}", board->name_, strerror(err));
  }
  board->map_ = mmap(nullptr, board->mapBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (board->map_ == MAP_FAILED) {
    board->map_ = nullptr;
    return fail(slimecclSystemError, "cannot map the GPU board {}: {}", board->name_, strerror(err));
  }
  board->posts_ = static_cast<BoardPost*>(board->map_);
  board->taken_ = reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(board->map_) + takenOffset);
  board->collTaken_ = reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(board->map_) + collTakenOffset);
  board->failed_ = reinterpret_cast<std::atomic<uint32_t>*>(static_cast<char*>(board->map_) + failedOffset);
  board->flags_ = reinterpret_cast<uint32_t*>(static_cast<char*>(board->map_) + postBytes);
  *out = std::move(board);
  return slimecclSuccess;
}

void PeerBoard::unlinkName() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
}

PeerBoard::~PeerBoard() {
  if (map_ != nullptr) munmap(map_, mapBytes_);
}

}  // namespace slimeccl
