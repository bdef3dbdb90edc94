// One rank of the topo multi-host scripts (run under slimeccl-run): AllGather over a sweep of
// block sizes on the world communicator, every element checked. Prints
// "hosts_allgather_check rank R of N: OK, B bytes gathered" and exits 0, or names the first
// failure and exits 1. The block sizes are printed too, so that scripts can bound the traffic.
#include <slimeccl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Odd sizes on purpose: chunking and stream splitting must not need round numbers.
constexpr size_t kBlockBytes[] = {1, 4099, (1 << 20) + 13, 16 << 20};

int envRank(const char* name) {
  const char* text = getenv(name);
  return text != nullptr ? atoi(text) : -1;
}

uint8_t expected(int rank, size_t offset) { return static_cast<uint8_t>(rank * 31 + offset * 7 + 1); }

}  // namespace

int main() {
  int rank = envRank("SLIMECCL_RANK"), nranks = envRank("SLIMECCL_NRANKS");
  if (rank < 0 || nranks < 1) {
    fprintf(stderr, "hosts_allgather_check: run it under slimeccl-run (SLIMECCL_RANK, SLIMECCL_NRANKS unset)\n");
    return 1;
  }
  slimecclUniqueId id;
  slimecclComm_t comm = nullptr;
  if (slimecclGetUniqueId(&id) != slimecclSuccess || slimecclCommInitRank(&comm, nranks, id, rank) != slimecclSuccess) {
    fprintf(stderr, "hosts_allgather_check rank %d: init failed: %s\n", rank, slimecclGetLastError(nullptr));
    return 1;
  }
  size_t gathered = 0;
  for (size_t block : kBlockBytes) {
    std::vector<uint8_t> mine(block), all(block * nranks, 0);
    for (size_t i = 0; i < block; ++i) mine[i] = expected(rank, i);
    if (slimecclAllGather(mine.data(), all.data(), block, slimecclUint8, comm, nullptr) != slimecclSuccess) {
      fprintf(stderr, "hosts_allgather_check rank %d: AllGather of %zu-byte blocks failed: %s\n", rank, block,
              slimecclGetLastError(comm));
      return 1;
    }
    for (int r = 0; r < nranks; ++r)
      for (size_t i = 0; i < block; ++i)
        if (all[r * block + i] != expected(r, i)) {
          fprintf(stderr, "hosts_allgather_check rank %d: %zu-byte blocks: byte %zu of rank %d's block is %u, not %u\n",
                  rank, block, i, r, all[r * block + i], expected(r, i));
          return 1;
        }
    gathered += block * nranks;
  }
  slimecclCommDestroy(comm);
  printf("hosts_allgather_check rank %d of %d: OK, %zu bytes gathered\n", rank, nranks, gathered);
  return 0;
}
