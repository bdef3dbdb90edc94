// The GPU's side of GPUDirect RDMA on a machine with GPUs (src/device/gpu_rdma.h): each GPU's
// facts (its PCI address as the topology spells it, whether it lets a NIC reach its memory and
// exports dmabufs), a real dmabuf exported for device memory, the copies the net modules make
// through the device memory access, and the flush of a NIC's writes. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "src/device/gpu.h"
#include "src/device/gpu_rdma.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

int gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

TEST(GpuRdma, EachGpuSaysWhatItAllows) {
  if (gpus() == 0) GTEST_SKIP() << "no GPU here";
  for (int d = 0; d < gpus(); ++d) {
    const GpuRdmaFacts facts = gpuRdmaFacts(d);
    EXPECT_TRUE(facts.present) << facts.why;
    char busId[32] = {};
    ASSERT_EQ(cudaDeviceGetPCIBusId(busId, sizeof(busId), d), cudaSuccess);
    EXPECT_EQ(strcasecmp(facts.busId.c_str(), busId), 0) << facts.busId << " vs " << busId;
    EXPECT_EQ(facts.busId.find_first_of("ABCDEF"), std::string::npos) << "lower case, as the topology spells it";
    printf("GPU %d (%s): GPUDirect RDMA %s, dmabuf %s\n", d, facts.busId.c_str(), facts.rdma ? "yes" : "no",
           facts.dmabuf ? "yes" : "no");
  }
  EXPECT_FALSE(gpuRdmaFacts(gpus()).present);
  EXPECT_FALSE(gpuRdmaFacts(-1).present);
}

TEST(GpuRdma, TheGpuExportsADmabufForDeviceMemory) {
  if (gpus() == 0) GTEST_SKIP() << "no GPU here";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  constexpr size_t kBytes = 4 << 20;
  void* buffer = nullptr;
  ASSERT_EQ(cudaMalloc(&buffer, kBytes), cudaSuccess);
  int fd = -1;
  uint64_t offset = 1;
  const slimecclResult_t rc = cudaDeviceMemory().dmabufOf(reinterpret_cast<uintptr_t>(buffer), kBytes, &fd, &offset);
  if (gpuRdmaFacts(0).dmabuf) {
    ASSERT_EQ(rc, slimecclSuccess) << threadError();
    EXPECT_EQ(offset, 0u);
    struct stat st {};
    EXPECT_EQ(fstat(fd, &st), 0);
    char link[256] = {};
    ASSERT_GT(readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), link, sizeof(link) - 1), 0);
    EXPECT_NE(std::string(link).find("dmabuf"), std::string::npos) << link;
    close(fd);
  } else {
    EXPECT_EQ(rc, slimecclSystemError);
    EXPECT_NE(threadError().find("exports no dmabuf"), std::string::npos) << threadError();
  }
  cudaFree(buffer);
}

// The ib module registers the host pages around a message: for a small allocation they reach past
// it, and the GPU must still export them.
TEST(GpuRdma, TheGpuExportsTheHostPagesAroundASmallAllocation) {
  if (gpus() == 0) GTEST_SKIP() << "no GPU here";
  if (!gpuRdmaFacts(0).dmabuf) GTEST_SKIP() << "GPU 0 exports no dmabufs";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* buffers[3] = {};
  for (void*& b : buffers) ASSERT_EQ(cudaMalloc(&b, 1000), cudaSuccess);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buffers[1]) + 100;
  const uintptr_t start = begin & ~(page - 1);
  const uintptr_t end = (begin + 500 + page - 1) & ~(page - 1);
  int fd = -1;
  uint64_t offset = 0;
  EXPECT_EQ(cudaDeviceMemory().dmabufOf(start, end - start, &fd, &offset), slimecclSuccess) << threadError();
  if (fd >= 0) close(fd);
  for (void* b : buffers) cudaFree(b);
}

TEST(GpuRdma, TheAccessTellsDeviceMemoryAndCopiesBothWays) {
  if (gpus() == 0) GTEST_SKIP() << "no GPU here";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceMemoryAccess& memory = cudaDeviceMemory();
  std::vector<char> out(5000), in(5000, 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 7);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, out.size()), cudaSuccess);
  EXPECT_TRUE(memory.isDeviceMemory(device));
  EXPECT_FALSE(memory.isDeviceMemory(out.data()));
  ASSERT_EQ(memory.copy(device, out.data(), out.size()), slimecclSuccess) << threadError();
  ASSERT_EQ(memory.copy(in.data(), device, in.size()), slimecclSuccess) << threadError();
  EXPECT_EQ(in, out);
  cudaFree(device);
}

TEST(GpuRdma, TheHostFlushesANicsWritesWhereTheGpuAllowsIt) {
  if (gpus() == 0) GTEST_SKIP() << "no GPU here";
  if (!gpuRdmaFacts(0).rdma) GTEST_SKIP() << "GPU 0 does not support GPUDirect RDMA with host flushes";
  EXPECT_EQ(flushRdmaWrites(0), slimecclSuccess) << threadError();
  EXPECT_EQ(awaitLegacyStream(0), slimecclSuccess) << threadError();
}

}  // namespace
}  // namespace slimeccl
