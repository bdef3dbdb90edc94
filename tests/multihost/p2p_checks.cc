#include "p2p_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "element_values.h"

namespace multihost {
namespace {

// Each (sender, receiver) pair gets its own values, so a message delivered to or taken from the
// wrong peer fails the check.
uint64_t pairSource(const CommView& view, int from, int to) { return static_cast<uint64_t>(from) * view.nranks + to; }

// Odd ranks post their receives first: a group must complete whatever the order of its calls.
bool receivesFirst(const CommView& view) { return view.rank % 2 == 1; }

}  // namespace

void runRingExchange(const CommView& view) {
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t byteCounts[] = {1, 1000, kMiB + 3, 8 * kMiB};
  const int next = (view.rank + 1) % view.nranks;
  const int prev = (view.rank + view.nranks - 1) % view.nranks;
  for (size_t bytes : byteCounts) {
    const uint64_t seed = nextCallSeed();
    std::vector<int8_t> out(bytes);
    std::vector<int8_t> in(bytes);
    fillValues(out.data(), bytes, seed, pairSource(view, view.rank, next));
    fillUnwritten(in.data(), bytes, seed, pairSource(view, prev, view.rank));

    REQUIRE_SUCCESS(slimecclGroupStart(), view.comm);
    if (receivesFirst(view))
      REQUIRE_SUCCESS(slimecclRecv(in.data(), bytes, slimecclInt8, prev, view.comm, nullptr), view.comm);
    REQUIRE_SUCCESS(slimecclSend(out.data(), bytes, slimecclInt8, next, view.comm, nullptr), view.comm);
    if (!receivesFirst(view))
      REQUIRE_SUCCESS(slimecclRecv(in.data(), bytes, slimecclInt8, prev, view.comm, nullptr), view.comm);
    REQUIRE_SUCCESS(slimecclGroupEnd(), view.comm);

    std::string wrong = firstMismatch(in.data(), bytes, seed, pairSource(view, prev, view.rank));
    if (!wrong.empty())
      fail("ring Send/Recv of " + std::to_string(bytes) + " bytes from rank " + std::to_string(prev) + ": " + wrong);
  }
}

void runAllPairsExchange(const CommView& view) {
  // Odd sizes that differ per pair, around 256 KiB each, so that a mixed-up length shows too.
  auto countFor = [](int from, int to) { return size_t{65536} + 4099 * from + 17 * to; };
  const uint64_t seed = nextCallSeed();
  const int n = view.nranks;
  std::vector<std::vector<float>> outgoing(n);
  std::vector<std::vector<float>> incoming(n);
  for (int peer = 0; peer < n; ++peer) {
    outgoing[peer].resize(countFor(view.rank, peer));
    fillValues(outgoing[peer].data(), outgoing[peer].size(), seed, pairSource(view, view.rank, peer));
    incoming[peer].resize(countFor(peer, view.rank));
    fillUnwritten(incoming[peer].data(), incoming[peer].size(), seed, pairSource(view, peer, view.rank));
  }

  auto postSends = [&] {
    for (int peer = 0; peer < n; ++peer)
      REQUIRE_SUCCESS(
          slimecclSend(outgoing[peer].data(), outgoing[peer].size(), slimecclFloat, peer, view.comm, nullptr),
          view.comm);
  };
  // Receives go in the opposite peer order to the sends.
  auto postReceives = [&] {
    for (int peer = n - 1; peer >= 0; --peer)
      REQUIRE_SUCCESS(
          slimecclRecv(incoming[peer].data(), incoming[peer].size(), slimecclFloat, peer, view.comm, nullptr),
          view.comm);
  };
  REQUIRE_SUCCESS(slimecclGroupStart(), view.comm);
  if (receivesFirst(view)) {
    postReceives();
    postSends();
  } else {
    postSends();
    postReceives();
  }
  REQUIRE_SUCCESS(slimecclGroupEnd(), view.comm);

  for (int peer = 0; peer < n; ++peer) {
    std::string wrong =
        firstMismatch(incoming[peer].data(), incoming[peer].size(), seed, pairSource(view, peer, view.rank));
    if (!wrong.empty()) fail("all-pairs Send/Recv: message from rank " + std::to_string(peer) + ": " + wrong);
  }
}

}  // namespace multihost
