// Unit tests of the ib module's pieces that need no verbs device: the immediate-data encoding,
// the RoCE GID choice, the registration cache (with a stand-in for the device, and the real
// userfaultfd monitor where the kernel allows it) and its registrations of device memory, and how
// the dmabuf probe and the peer memory client's files are read.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>

#include "net/ib/ib_device.h"
#include "net/ib/ib_device_memory.h"
#include "net/ib/ib_wire.h"
#include "net/ib/mr_cache.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

TEST(IbImmediate, CarriesKindAndIndex) {
  for (Arrival kind : {Arrival::Eager, Arrival::Announce, Arrival::Final, Arrival::Refused}) {
    uint32_t imm = packImm(kind, 12345);
    EXPECT_EQ(immArrival(imm), kind);
    EXPECT_EQ(immIndex(imm, 12000), 12345);
  }
}

TEST(IbImmediate, IndexSurvivesWrapOfItsThirtyBits) {
  uint64_t base = (1ULL << 30) - 3;
  for (uint64_t index = base; index < base + 10; ++index)
    EXPECT_EQ(immIndex(packImm(Arrival::Final, index), base), static_cast<int64_t>(index));
  uint64_t far = 5 * (1ULL << 30) + 17;
  EXPECT_EQ(immIndex(packImm(Arrival::Eager, far + 40), far), static_cast<int64_t>(far + 40));
}

TEST(IbImmediate, ARepeatOfAFinishedMessageReadsAsBehind) {
  EXPECT_EQ(immIndex(packImm(Arrival::Final, 357), 360), 357);
  EXPECT_EQ(immIndex(packImm(Arrival::Eager, 0), 3), 0);
  uint64_t base = 3 * (1ULL << 30) + 2;
  EXPECT_EQ(immIndex(packImm(Arrival::Final, base - 5), base), static_cast<int64_t>(base - 5));
}

ibv_gid gidOf(std::initializer_list<uint8_t> head, std::initializer_list<uint8_t> tail) {
  ibv_gid gid{};
  size_t i = 0;
  for (uint8_t b : head) gid.raw[i++] = b;
  i = 16 - tail.size();
  for (uint8_t b : tail) gid.raw[i++] = b;
  return gid;
}

TEST(IbGidChoice, PrefersRoceV2WithIpv4) {
  ibv_gid linkLocal = gidOf({0xfe, 0x80}, {0x02, 0x77, 0, 0xff, 0xfe, 0, 0, 1});
  ibv_gid ipv4 = gidOf({}, {0xff, 0xff, 10, 77, 0, 1});
  ibv_gid global6 = gidOf({0x20, 0x01, 0x0d, 0xb8}, {1});
  std::vector<GidEntry> table = {{0, linkLocal, IBV_GID_TYPE_ROCE_V1},
                                 {1, linkLocal, IBV_GID_TYPE_ROCE_V2},
                                 {2, global6, IBV_GID_TYPE_ROCE_V2},
                                 {3, ipv4, IBV_GID_TYPE_ROCE_V1},
                                 {4, ipv4, IBV_GID_TYPE_ROCE_V2}};
  EXPECT_EQ(chooseRoceGid(table), 4);
  table.pop_back();
  EXPECT_EQ(chooseRoceGid(table), 2);
  table.pop_back();
  table.pop_back();
  EXPECT_EQ(chooseRoceGid(table), 1);
  table.pop_back();
  EXPECT_EQ(chooseRoceGid(table), 0);
  EXPECT_EQ(chooseRoceGid({}), -1);
}

// Stands in for the device: counts registrations and hands out distinct keys.
class CountingRegistrar final : public Registrar {
 public:
  struct Counts {
    int registered = 0;
    int deregistered = 0;
    std::map<void*, std::pair<uintptr_t, size_t>> live;
    bool refuseDmabuf = false;
    bool dmabufFdOpen = false;  // the fd was open when handed to the registrar
    uint64_t dmabufOffset = 0;
  };
  explicit CountingRegistrar(Counts* counts) : counts_(counts) {}
  void* reg(uintptr_t start, size_t len, bool* remoteWrite, uint32_t* lkey, uint32_t* rkey) override {
    *remoteWrite = true;
    *lkey = *rkey = static_cast<uint32_t>(++counts_->registered);
    void* handle = reinterpret_cast<void*>(static_cast<uintptr_t>(counts_->registered));
    counts_->live[handle] = {start, len};
    return handle;
  }
  void* regDmabuf(uintptr_t iova, size_t len, int fd, uint64_t offset, uint32_t* lkey, uint32_t* rkey) override {
    if (counts_->refuseDmabuf) {
      errno = EOPNOTSUPP;
      return nullptr;
    }
    counts_->dmabufFdOpen = fcntl(fd, F_GETFD) != -1;
    counts_->dmabufOffset = offset;
    bool remoteWrite = true;
    return reg(iova, len, &remoteWrite, lkey, rkey);
  }
  void dereg(void* handle) override {
    ++counts_->deregistered;
    counts_->live.erase(handle);
  }

 private:
  Counts* counts_;
};

class IbMrCacheTest : public ::testing::Test {
 protected:
  static constexpr size_t kBytes = 1 << 20;
  void SetUp() override {
    monitor_ = MemoryMonitor::instance(&why_);
    for (char*& b : buffers_) {
      b = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      ASSERT_NE(b, MAP_FAILED);
      memset(b, 1, kBytes);
    }
  }
  void TearDown() override {
    for (char* b : buffers_)
      if (b != nullptr) munmap(b, kBytes);
  }
  std::unique_ptr<MrCache> makeCache(size_t entries, bool withMonitor = true) {
    return std::make_unique<MrCache>(std::make_unique<CountingRegistrar>(&counts_), entries,
                                     withMonitor ? monitor_ : nullptr);
  }
  uint32_t use(MrCache& cache, const void* data, size_t size) {
    MrRef ref;
    EXPECT_EQ(cache.acquire(data, size, true, &ref), slimecclSuccess);
    uint32_t key = ref.rkey;
    cache.release(&ref);
    return key;
  }

  MemoryMonitor* monitor_ = nullptr;
  std::string why_;
  CountingRegistrar::Counts counts_;
  char* buffers_[3] = {};
};

TEST_F(IbMrCacheTest, ReusesARegistrationForRangesInsideIt) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  uint32_t key = use(*cache, buffers_[0], kBytes);
  EXPECT_EQ(use(*cache, buffers_[0] + 4096, 1000), key);
  EXPECT_EQ(use(*cache, buffers_[0] + kBytes - 1, 1), key);
  EXPECT_EQ(counts_.registered, 1);
  EXPECT_EQ(cache->stats().hits, 2u);
}

TEST_F(IbMrCacheTest, RegistersWholePages) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  use(*cache, buffers_[0] + 100, 10);
  ASSERT_EQ(counts_.live.size(), 1u);
  auto [start, len] = counts_.live.begin()->second;
  EXPECT_EQ(start, reinterpret_cast<uintptr_t>(buffers_[0]));
  EXPECT_EQ(len, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
}

TEST_F(IbMrCacheTest, EvictsTheLeastRecentlyUsedIdleEntry) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(2);
  use(*cache, buffers_[0], kBytes);
  use(*cache, buffers_[1], kBytes);
  use(*cache, buffers_[0], kBytes);  // buffers_[1] is now the oldest
  use(*cache, buffers_[2], kBytes);
  EXPECT_EQ(counts_.registered, 3);
  EXPECT_EQ(cache->entries(), 2u);
  use(*cache, buffers_[0], kBytes);
  EXPECT_EQ(counts_.registered, 3);
  use(*cache, buffers_[1], kBytes);
  EXPECT_EQ(counts_.registered, 4);
}

TEST_F(IbMrCacheTest, KeepsEntriesInUseBeyondItsSize) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(1);
  MrRef a, b;
  ASSERT_EQ(cache->acquire(buffers_[0], kBytes, true, &a), slimecclSuccess);
  ASSERT_EQ(cache->acquire(buffers_[1], kBytes, true, &b), slimecclSuccess);
  EXPECT_EQ(counts_.deregistered, 0);
  cache->release(&a);
  cache->release(&b);
  use(*cache, buffers_[2], kBytes);
  EXPECT_EQ(cache->entries(), 1u);
  EXPECT_EQ(counts_.live.size(), 1u);
}

TEST_F(IbMrCacheTest, ForgetsMemoryThatWasUnmappedAndMappedAgainAtTheSameAddress) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  void* address = buffers_[0];
  uint32_t before = use(*cache, address, kBytes);
  ASSERT_EQ(munmap(address, kBytes), 0);
  buffers_[0] = static_cast<char*>(
      mmap(address, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
  ASSERT_EQ(buffers_[0], address);
  memset(buffers_[0], 2, kBytes);
  EXPECT_NE(use(*cache, address, kBytes), before);
  EXPECT_EQ(counts_.registered, 2);
  EXPECT_EQ(counts_.deregistered, 1);
  EXPECT_EQ(cache->stats().invalidations, 1u);
}

TEST_F(IbMrCacheTest, ForgetsMemoryWhosePagesWereDiscarded) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  uint32_t before = use(*cache, buffers_[0], kBytes);
  ASSERT_EQ(madvise(buffers_[0] + 8192, 4096, MADV_DONTNEED), 0);
  EXPECT_NE(use(*cache, buffers_[0], kBytes), before);
}

TEST_F(IbMrCacheTest, ForgetsMemoryThatMoved) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  uint32_t before = use(*cache, buffers_[0], kBytes);
  void* moved = mremap(buffers_[0], kBytes, 2 * kBytes, MREMAP_MAYMOVE);
  ASSERT_NE(moved, MAP_FAILED);
  if (moved == buffers_[0]) GTEST_SKIP() << "the mapping grew in place";
  munmap(moved, 2 * kBytes);
  buffers_[0] = static_cast<char*>(
      mmap(buffers_[0], kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
  ASSERT_NE(buffers_[0], MAP_FAILED);
  EXPECT_NE(use(*cache, buffers_[0], kBytes), before);
}

TEST_F(IbMrCacheTest, UnrelatedUnmapsKeepEntries) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  uint32_t before = use(*cache, buffers_[0], kBytes);
  ASSERT_EQ(munmap(buffers_[1], kBytes), 0);
  buffers_[1] = nullptr;
  EXPECT_EQ(use(*cache, buffers_[0], kBytes), before);
}

TEST_F(IbMrCacheTest, WithoutAMonitorEveryMessageRegistersItsBuffer) {
  auto cache = makeCache(8, false);
  use(*cache, buffers_[0], kBytes);
  use(*cache, buffers_[0], kBytes);
  EXPECT_EQ(counts_.registered, 2);
  EXPECT_EQ(counts_.deregistered, 2);
  EXPECT_EQ(cache->entries(), 0u);
}

TEST_F(IbMrCacheTest, DeregistersEverythingWhenDestroyed) {
  if (monitor_ == nullptr) GTEST_SKIP() << "no memory monitor here: " << why_;
  auto cache = makeCache(8);
  use(*cache, buffers_[0], kBytes);
  use(*cache, buffers_[1], kBytes);
  cache.reset();
  EXPECT_TRUE(counts_.live.empty());
}

// Host memory standing in for a GPU's: the registration cache's device path is what is tested.
class MemfdAsDeviceMemory final : public DeviceMemoryAccess {
 public:
  bool isDeviceMemory(const void*) const override { return true; }
  slimecclResult_t dmabufOf(uintptr_t start, size_t bytes, int* fd, uint64_t* offset) const override {
    asked = {start, bytes};
    *fd = memfd_create("dmabuf-stand-in", 0);
    lastFd = *fd;
    *offset = 4096;
    return slimecclSuccess;
  }
  slimecclResult_t copy(void* dst, const void* src, size_t bytes) const override {
    memcpy(dst, src, bytes);
    return slimecclSuccess;
  }
  mutable std::pair<uintptr_t, size_t> asked;
  mutable int lastFd = -1;
};

TEST_F(IbMrCacheTest, DeviceMemoryByDmabufIsRegisteredForTheOneMessage) {
  auto cache = makeCache(8);
  MemfdAsDeviceMemory memory;
  MrRef ref;
  ASSERT_EQ(cache->acquireDevice(buffers_[0] + 100, 5000, memory, DeviceMemoryRoute::Dmabuf, &ref), slimecclSuccess);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(memory.asked.first, reinterpret_cast<uintptr_t>(buffers_[0]));
  EXPECT_EQ(memory.asked.second % page, 0u);
  EXPECT_GE(memory.asked.second, 5100u);
  EXPECT_TRUE(counts_.dmabufFdOpen);
  EXPECT_EQ(counts_.dmabufOffset, 4096u);
  EXPECT_EQ(fcntl(memory.lastFd, F_GETFD), -1) << "the dmabuf's fd should be closed once registered";
  EXPECT_EQ(counts_.live.size(), 1u);
  cache->release(&ref);
  EXPECT_TRUE(counts_.live.empty()) << "device memory registrations are not kept";
  EXPECT_EQ(cache->entries(), 0u);
}

TEST_F(IbMrCacheTest, DeviceMemoryThroughAPeerMemoryClientRegistersTheAddress) {
  auto cache = makeCache(8);
  MemfdAsDeviceMemory memory;
  MrRef ref;
  ASSERT_EQ(cache->acquireDevice(buffers_[1], kBytes, memory, DeviceMemoryRoute::PeerMemory, &ref), slimecclSuccess);
  EXPECT_EQ(memory.lastFd, -1) << "no dmabuf is asked for";
  ASSERT_EQ(counts_.live.size(), 1u);
  EXPECT_EQ(counts_.live.begin()->second.first, reinterpret_cast<uintptr_t>(buffers_[1]));
  cache->release(&ref);
  EXPECT_TRUE(counts_.live.empty());
}

TEST_F(IbMrCacheTest, DeviceMemoryTheDeviceRefusesFailsWithASentence) {
  auto cache = makeCache(8);
  MemfdAsDeviceMemory memory;
  counts_.refuseDmabuf = true;
  MrRef ref;
  EXPECT_EQ(cache->acquireDevice(buffers_[0], 4096, memory, DeviceMemoryRoute::Dmabuf, &ref), slimecclSystemError);
  const std::string why = threadError();
  EXPECT_NE(why.find("the device refused 4096 bytes of GPU memory"), std::string::npos) << why;
  EXPECT_NE(why.find("registered by dmabuf"), std::string::npos) << why;
  EXPECT_NE(why.find(strerror(EOPNOTSUPP)), std::string::npos) << why;
  EXPECT_EQ(fcntl(memory.lastFd, F_GETFD), -1) << "the refused dmabuf's fd should be closed";
  EXPECT_EQ(cache->entries(), 0u);
}

TEST(IbDeviceMemory, TheDmabufProbeReadsTheDriversAnswer) {
  EXPECT_FALSE(dmabufProbeSaysSupported(EOPNOTSUPP));
  EXPECT_FALSE(dmabufProbeSaysSupported(EPROTONOSUPPORT));
  EXPECT_TRUE(dmabufProbeSaysSupported(EBADF));
  EXPECT_TRUE(dmabufProbeSaysSupported(EINVAL));
}

TEST(IbDeviceMemory, APeerMemoryClientIsSeenByItsFiles) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("slimeccl-sys-" + std::to_string(getpid()));
  EXPECT_FALSE(peerMemoryClientLoaded(root.string()));
  for (const char* file : {"kernel/mm/memory_peers/nv_mem/version", "module/nvidia_peermem/version"}) {
    std::filesystem::create_directories((root / file).parent_path());
    std::ofstream(root / file) << "1.0\n";
    EXPECT_TRUE(peerMemoryClientLoaded(root.string())) << file;
    std::filesystem::remove_all(root);
  }
}

TEST(IbDeviceMemory, SupportSaysWhatTheDeviceAndTheKernelTake) {
  IbDevice dev;
  dev.port.device = "rxe_a";
  const std::string noSys = "/nonexistent-sys";
  DeviceMemorySupport support = ibDeviceMemorySupport(
      dev, [](ibv_pd*) { return EOPNOTSUPP; }, noSys);
  EXPECT_EQ(support.device, "rxe_a");
  EXPECT_FALSE(support.dmabuf);
  EXPECT_FALSE(support.peerMemory);
  EXPECT_NE(
      support.why.find("rxe_a refuses dmabuf registrations (ibv_reg_dmabuf_mr: " + std::string(strerror(EOPNOTSUPP))),
      std::string::npos)
      << support.why;
  EXPECT_NE(support.why.find("no peer memory client"), std::string::npos) << support.why;
  support = ibDeviceMemorySupport(
      dev, [](ibv_pd*) { return EBADF; }, noSys);
  EXPECT_TRUE(support.dmabuf);
  EXPECT_NE(support.why.find("rxe_a registers dmabufs"), std::string::npos) << support.why;
}

}  // namespace
}  // namespace slimeccl
