// Helper of comm_selection_test: creates N thread ranks with slimecclCommInitAll (as a fresh
// process, so the topology variables it was started with apply), runs one AllGather, checks it.
// Prints "ok" or the library's error sentence; exits 0 or 1.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <slimeccl.h>

int main(int argc, char** argv) {
  int nranks = argc > 1 ? atoi(argv[1]) : 2;
  if (nranks < 1 || nranks > 64) {
    fprintf(stderr, "usage: comm_probe [NRANKS 1..64]\n");
    return 2;
  }
  std::vector<slimecclComm_t> comms(nranks, nullptr);
  if (slimecclCommInitAll(comms.data(), nranks, nullptr) != slimecclSuccess) {
    printf("%s\n", slimecclGetLastError(nullptr));
    return 1;
  }
  constexpr int kCount = 1000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.emplace_back([&, r] {
      std::vector<int> mine(kCount, r), all(static_cast<size_t>(kCount) * nranks, -1);
      if (slimecclAllGather(mine.data(), all.data(), kCount, slimecclInt32, comms[r], nullptr) != slimecclSuccess) {
        printf("rank %d: %s\n", r, slimecclGetLastError(comms[r]));
        ++wrong;
        return;
      }
      for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != static_cast<int>(i / kCount);
    });
  for (std::thread& t : ranks) t.join();
  for (slimecclComm_t comm : comms) slimecclCommDestroy(comm);
  if (wrong != 0) {
    printf("%d wrong values\n", wrong.load());
    return 1;
  }
  printf("ok\n");
  return 0;
}
