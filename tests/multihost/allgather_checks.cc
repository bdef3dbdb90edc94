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
std::string describe(const CommView& view, size_t count, bool in_place) {
  return std::string("AllGather ") + DatatypeOf<T>::name + " count " + std::to_string(count) +
         (in_place ? " in place" : " out of place") + " over " + std::to_string(view.nranks) + " ranks";
}

}  // namespace

template <typename T>
void check_allgather(const CommView& view, size_t count, bool in_place) {
  const uint64_t seed = next_call_seed();
  const size_t total = count * static_cast<size_t>(view.nranks);
  std::vector<T> storage(total + 2 * kGuardElements);
  T* front_guard = storage.data();
  T* recv = front_guard + kGuardElements;
  T* back_guard = recv + total;
  fill_values(front_guard, kGuardElements, seed, kGuardSource);
  fill_values(back_guard, kGuardElements, seed, kGuardSource);
  for (int src = 0; src < view.nranks; ++src) fill_unwritten(recv + src * count, count, seed, src);

  T* own_block = recv + view.rank * count;
  std::vector<T> separate_send;
  const T* send = own_block;
  if (in_place) {
    fill_values(own_block, count, seed, view.rank);
  } else {
    separate_send.resize(count);
    fill_values(separate_send.data(), count, seed, view.rank);
    send = separate_send.data();
  }

  REQUIRE_SUCCESS(slimecclAllGather(send, recv, count, DatatypeOf<T>::value, view.comm, nullptr), view.comm);

  for (int src = 0; src < view.nranks; ++src) {
    std::string wrong = first_mismatch(recv + src * count, count, seed, src);
    if (!wrong.empty())
      fail(describe<T>(view, count, in_place) + ": block of rank " + std::to_string(src) + ": " + wrong);
  }
  if (!first_mismatch(front_guard, kGuardElements, seed, kGuardSource).empty())
    fail(describe<T>(view, count, in_place) + ": wrote before the start of the receive buffer");
  if (!first_mismatch(back_guard, kGuardElements, seed, kGuardSource).empty())
    fail(describe<T>(view, count, in_place) + ": wrote past the end of the receive buffer");
  if (!in_place && !first_mismatch(separate_send.data(), count, seed, view.rank).empty())
    fail(describe<T>(view, count, in_place) + ": changed the send buffer");
}

template void check_allgather<int8_t>(const CommView&, size_t, bool);
template void check_allgather<float>(const CommView&, size_t, bool);
template void check_allgather<double>(const CommView&, size_t, bool);

namespace {

template <typename T>
void sweep_counts(const CommView& view) {
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t counts[] = {1, 1000, kMiB / sizeof(T) + 3, 8 * kMiB / sizeof(T)};
  for (size_t count : counts) {
    check_allgather<T>(view, count, false);
    check_allgather<T>(view, count, true);
  }
}

}  // namespace

void run_allgather_sweep(const CommView& view) {
  sweep_counts<int8_t>(view);
  sweep_counts<float>(view);
  sweep_counts<double>(view);
}

}  // namespace multihost
