#include "allgather_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "element_values.h"

namespace multihost {
namespace {

// Elements on each side of the receive area; the library must leave them alone.
constexpr size_t kGuardElements = 64;
// Guard values come from a source no rank uses.
constexpr uint64_t kGuardSource = ~0ull;

template <typename T>
std::string describe(const CommView& view, size_t count, bool inPlace) {
  return std::string("AllGather ") + DatatypeOf<T>::kName + " count " + std::to_string(count) +
         (inPlace ? " in place" : " out of place") + " over " + std::to_string(view.nranks) + " ranks";
}

}  // namespace

template <typename T>
void checkAllgather(const CommView& view, size_t count, bool inPlace) {
  const uint64_t seed = nextCallSeed();
  const size_t total = count * static_cast<size_t>(view.nranks);
  std::vector<T> storage(total + 2 * kGuardElements);
  T* frontGuard = storage.data();
  T* recv = frontGuard + kGuardElements;
  T* backGuard = recv + total;
  fillValues(frontGuard, kGuardElements, seed, kGuardSource);
  fillValues(backGuard, kGuardElements, seed, kGuardSource);
  for (int src = 0; src < view.nranks; ++src) fillUnwritten(recv + src * count, count, seed, src);

  T* ownBlock = recv + view.rank * count;
  std::vector<T> separateSend;
  const T* send = ownBlock;
  if (inPlace) {
    fillValues(ownBlock, count, seed, view.rank);
  } else {
    separateSend.resize(count);
    fillValues(separateSend.data(), count, seed, view.rank);
    send = separateSend.data();
  }

  REQUIRE_SUCCESS(slimecclAllGather(send, recv, count, DatatypeOf<T>::kValue, view.comm, nullptr), view.comm);

  for (int src = 0; src < view.nranks; ++src) {
    std::string wrong = firstMismatch(recv + src * count, count, seed, src);
    if (!wrong.empty())
      fail(describe<T>(view, count, inPlace) + ": block of rank " + std::to_string(src) + ": " + wrong);
  }
  if (!firstMismatch(frontGuard, kGuardElements, seed, kGuardSource).empty())
    fail(describe<T>(view, count, inPlace) + ": wrote before the start of the receive buffer");
  if (!firstMismatch(backGuard, kGuardElements, seed, kGuardSource).empty())
    fail(describe<T>(view, count, inPlace) + ": wrote past the end of the receive buffer");
  if (!inPlace && !firstMismatch(separateSend.data(), count, seed, view.rank).empty())
    fail(describe<T>(view, count, inPlace) + ": changed the send buffer");
}

template void checkAllgather<int8_t>(const CommView&, size_t, bool);
template void checkAllgather<float>(const CommView&, size_t, bool);
template void checkAllgather<double>(const CommView&, size_t, bool);

namespace {

template <typename T>
void sweepCounts(const CommView& view) {
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t counts[] = {1, 1000, kMiB / sizeof(T) + 3, 8 * kMiB / sizeof(T)};
  for (size_t count : counts) {
    checkAllgather<T>(view, count, false);
    checkAllgather<T>(view, count, true);
  }
}

}  // namespace

void runAllgatherSweep(const CommView& view) {
  sweepCounts<int8_t>(view);
  sweepCounts<float>(view);
  sweepCounts<double>(view);
}

}  // namespace multihost
