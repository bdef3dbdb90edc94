// touchPages writes nothing: contents stay, and a peer writing the same words meanwhile loses no
// update.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "src/base/sys/touch_pages.h"

namespace slimeccl {
namespace {

TEST(TouchPages, ContentsStayAsTheyWere) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = 37 * page;
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* bytesAt = static_cast<unsigned char*>(map);
  for (size_t i = 0; i < bytes; ++i) bytesAt[i] = static_cast<unsigned char>(i * 131 + 7);
  touchPages(map, bytes);
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(bytesAt[i], static_cast<unsigned char>(i * 131 + 7)) << "byte " << i;
  munmap(map, bytes);
}

TEST(TouchPages, AConcurrentWriterLosesNothing) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = 4 * page;
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* counters = static_cast<char*>(map);
  constexpr uint64_t kWrites = 200000;
  std::atomic<bool> go{false};
  std::thread writer([&] {
    while (!go.load()) {}
    for (uint64_t n = 1; n <= kWrites; ++n)
      for (size_t p = 0; p < bytes; p += page)
        std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(counters + p)).store(n, std::memory_order_relaxed);
  });
  go.store(true);
  for (int round = 0; round < 2000; ++round) touchPages(map, bytes);
  writer.join();
  for (size_t p = 0; p < bytes; p += page) EXPECT_EQ(*reinterpret_cast<uint64_t*>(counters + p), kWrites);
  munmap(map, bytes);
}

}  // namespace
}  // namespace slimeccl
