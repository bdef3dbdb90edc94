// The registry of slimecclMemAlloc's buffers (src/base/sys/shared_alloc.h) and a receiver's mappings of
// them (net/shm/peer_mappings.h), exercised on this process's own allocations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "net/shm/peer_mappings.h"
#include "src/base/sys/shared_alloc.h"

namespace slimeccl {
namespace {

// An allocation of the registry, freed at the end of the test unless freed before.
struct Allocation {
  char* ptr;
  explicit Allocation(size_t bytes) {
    std::string why;
    ptr = static_cast<char*>(sharedAlloc(bytes, &why));
    EXPECT_NE(ptr, nullptr) << why;
  }
  ~Allocation() {
    if (ptr != nullptr) sharedFree(ptr);
  }
  void free() {
    EXPECT_TRUE(sharedFree(ptr));
    ptr = nullptr;
  }
  SharedAllocPlace place(size_t offset, size_t len) const {
    SharedAllocPlace p;
    EXPECT_TRUE(findSharedAlloc(ptr + offset, len, &p));
    return p;
  }
};

TEST(SharedAlloc, FindsRangesThatLieInsideALiveAllocationOnly) {
  const size_t page = sharedAllocHeaderBytes();
  Allocation a(10000);
  SharedAllocPlace place = a.place(0, 10000);
  EXPECT_EQ(place.offset, page);
  EXPECT_EQ(place.fileBytes, page + (10000 + page - 1) / page * page);
  EXPECT_GE(place.fd, 0);
  EXPECT_EQ(a.place(5000, 5000).offset, page + 5000);
  SharedAllocPlace unused;
  EXPECT_FALSE(findSharedAlloc(a.ptr + 5000, 5001, &unused));
  EXPECT_FALSE(findSharedAlloc(a.ptr - 1, 1, &unused));
  int onTheStack = 0;
  EXPECT_FALSE(findSharedAlloc(&onTheStack, sizeof(onTheStack), &unused));
  char* gone = a.ptr;
  a.free();
  EXPECT_FALSE(findSharedAlloc(gone, 1, &unused));
  EXPECT_FALSE(sharedFree(gone));
}

TEST(SharedAlloc, EachAllocationHasItsOwnIdInItsHeaderPage) {
  Allocation a(100), b(100);
  SharedAllocPlace pa = a.place(0, 100), pb = b.place(0, 100);
  EXPECT_EQ(pa.id.nonce, pb.id.nonce);
  EXPECT_NE(pa.id.serial, pb.id.serial);
  const auto* head = reinterpret_cast<const SharedAllocHeader*>(a.ptr - sharedAllocHeaderBytes());
  EXPECT_EQ(head->magic, kSharedAllocMagic);
  EXPECT_TRUE(head->id == pa.id);
  EXPECT_EQ(head->userBytes, 100u);
  EXPECT_EQ(head->freed, 0u);
}

TEST(PeerMappings, MapsAnAllocationOnceAndReadsItsBytes) {
  Allocation a(50000);
  for (size_t i = 0; i < 50000; ++i) a.ptr[i] = static_cast<char>(i * 7);
  PeerMappings mappings;
  std::string why;
  const char* seen = mappings.find(getpid(), a.place(1000, 40000), 40000, &why);
  ASSERT_NE(seen, nullptr) << why;
  EXPECT_NE(seen, a.ptr + 1000);  // a mapping of its own, not the owner's address
  EXPECT_EQ(memcmp(seen, a.ptr + 1000, 40000), 0);
  EXPECT_EQ(mappings.find(getpid(), a.place(0, 10), 10, &why) + 1000, seen);
  EXPECT_EQ(mappings.size(), 1u);
}

TEST(PeerMappings, RefusesADescriptionThatDoesNotMatchTheFile) {
  Allocation a(8192);
  PeerMappings mappings;
  std::string why;
  SharedAllocPlace wrongId = a.place(0, 8192);
  ++wrongId.id.serial;
  EXPECT_EQ(mappings.find(getpid(), wrongId, 8192, &why), nullptr);
  EXPECT_NE(why.find("another allocation"), std::string::npos) << why;
  SharedAllocPlace wrongSize = a.place(0, 8192);
  wrongSize.fileBytes += 4096;
  EXPECT_EQ(mappings.find(getpid(), wrongSize, 8192, &why), nullptr);
  EXPECT_NE(why.find("is not the allocation described"), std::string::npos) << why;
  EXPECT_EQ(mappings.find(getpid(), a.place(4096, 4096), 8193, &why), nullptr);
  EXPECT_NE(why.find("overruns"), std::string::npos) << why;
  SharedAllocPlace noFile = a.place(0, 1);
  noFile.fd = 1 << 20;
  EXPECT_EQ(mappings.find(getpid(), noFile, 1, &why), nullptr);
  EXPECT_NE(why.find("cannot open"), std::string::npos) << why;
  EXPECT_EQ(mappings.size(), 0u);
}

TEST(PeerMappings, DropsTheMappingOfAFreedAllocation) {
  PeerMappings mappings;
  std::string why;
  Allocation a(4096), b(4096);
  memset(b.ptr, 9, 4096);
  ASSERT_NE(mappings.find(getpid(), a.place(0, 4096), 4096, &why), nullptr) << why;
  a.free();
  const char* seen = mappings.find(getpid(), b.place(0, 4096), 4096, &why);
  ASSERT_NE(seen, nullptr) << why;
  EXPECT_EQ(seen[4095], 9);
  EXPECT_EQ(mappings.size(), 1u);
}

}  // namespace
}  // namespace slimeccl
