// CUDA device buffers through the public API: every collective and Send/Recv in and out of place
// on forked ranks over shm and sockets and on threads, with the NULL stream, a host stream and a
// stream in a CUDA stream's order (slimecclStreamCreateFromCuda). Ranks share the machine's GPUs
// round robin. Without a usable GPU the data tests skip and the CUDA stream is refused.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "device_values.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// Asked in a child: a parent that had touched CUDA could not fork ranks that use it.
bool gpuUsable() {
  static const bool usable = [] {
    const pid_t child = fork();
    if (child == 0) {
      int count = 0;
      _exit(cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? 0 : 1);
    }
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return usable;
}

#define SKIP_WITHOUT_GPU() \
  if (!gpuUsable()) GTEST_SKIP() << "no usable CUDA device here"

void useGpuOf(int rank) {
  int count = 0;
  CUDA_RANK_CHECK(cudaGetDeviceCount(&count));
  CUDA_RANK_CHECK(cudaSetDevice(rank % count));
}

// A rank's int32 buffer in device memory.
class DeviceInts {
 public:
  explicit DeviceInts(size_t count) : count_(count) {
    CUDA_RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
    CUDA_RANK_CHECK(cudaMemset(data_, 0xee, bytes()));
    CUDA_RANK_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  ~DeviceInts() { cudaFree(data_); }
  DeviceInts(const DeviceInts&) = delete;
  DeviceInts& operator=(const DeviceInts&) = delete;

  int32_t* data() const { return data_; }
  size_t bytes() const { return count_ * sizeof(int32_t); }
  // As users write device buffers: cudaMemcpy from pageable memory, which may return before the
  // bytes land (ops on the NULL stream copy after it, on the legacy default stream).
  void write(const std::vector<int32_t>& values, size_t at = 0) {
    CUDA_RANK_CHECK(cudaMemcpy(data_ + at, values.data(), values.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  }
  std::vector<int32_t> read() const {
    std::vector<int32_t> values(count_);
    CUDA_RANK_CHECK(cudaMemcpy(values.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return values;
  }

 private:
  size_t count_;
  int32_t* data_ = nullptr;
};

// Element counts across the shm paths: slots, FIFO, single copy.
const size_t kCounts[] = {1, 4100, 262147};
constexpr int kRanks = 3;

class DeviceBuffers : public ::testing::TestWithParam<Launch> {};

TEST_P(DeviceBuffers, AllGatherAndAlltoAllInAndOutOfPlace) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        DeviceInts send(count), recv(count * kRanks);
        int32_t* mine = inPlace ? recv.data() + rank * count : send.data();
        if (inPlace)
          recv.write(valuesOf(rank, count), rank * count);
        else
          send.write(valuesOf(rank, count));
        RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data(), count, slimecclInt32, comm, nullptr), comm);
        const std::vector<int32_t> got = recv.read();
        for (int r = 0; r < kRanks; ++r)
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[r * count + i] == valueOf(r, i), "AllGather count ", count, " in place ", inPlace, " block ",
                       r, " element ", i);
      }
      DeviceInts send(count * kRanks), recv(count * kRanks);
      send.write(valuesOf(rank, count * kRanks));
      RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), count, slimecclInt32, comm, nullptr), comm);
      const std::vector<int32_t> got = recv.read();
      for (int from = 0; from < kRanks; ++from)
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[from * count + i] == valueOf(from, rank * count + i), "AlltoAll count ", count, " from ", from,
                     " element ", i);
    }
  });
}

TEST_P(DeviceBuffers, ReductionsInAndOutOfPlace) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    auto sum = [](size_t i) { return valueOf(0, i) + valueOf(1, i) + valueOf(2, i); };
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        DeviceInts send(count), recv(count);
        DeviceInts& input = inPlace ? recv : send;
        input.write(valuesOf(rank, count));
        RANK_CHECK_SUCCESS(
            slimecclAllReduce(input.data(), recv.data(), count, slimecclInt32, slimecclSum, comm, nullptr), comm);
        std::vector<int32_t> got = recv.read();
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[i] == sum(i), "AllReduce count ", count, " in place ", inPlace, " element ", i);

        const int root = 2;
        input.write(valuesOf(rank, count));
        RANK_CHECK_SUCCESS(
            slimecclReduce(input.data(), recv.data(), count, slimecclInt32, slimecclSum, root, comm, nullptr), comm);
        if (rank == root) {
          got = recv.read();
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(got[i] == sum(i), "Reduce count ", count, " in place ", inPlace, " element ", i);
        }
      }
      for (bool inPlace : {false, true}) {
        DeviceInts send(count * kRanks), recv(count);
        send.write(valuesOf(rank, count * kRanks));
        int32_t* out = inPlace ? send.data() + rank * count : recv.data();
        RANK_CHECK_SUCCESS(slimecclReduceScatter(send.data(), out, count, slimecclInt32, slimecclSum, comm, nullptr),
                           comm);
        const std::vector<int32_t> got = inPlace ? send.read() : recv.read();
        const size_t first = inPlace ? rank * count : 0;
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[first + i] == sum(rank * count + i), "ReduceScatter count ", count, " in place ", inPlace,
                     " element ", i);
      }
    }
  });
}

TEST_P(DeviceBuffers, BroadcastInAndOutOfPlaceAtTheRoot) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    const int root = 1;
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        DeviceInts send(count), recv(count);
        DeviceInts& input = inPlace ? recv : send;
        if (rank == root) input.write(valuesOf(root, count, 0, inPlace));
        RANK_CHECK_SUCCESS(slimecclBroadcast(input.data(), recv.data(), count, slimecclInt32, root, comm, nullptr),
                           comm);
        const std::vector<int32_t> got = recv.read();
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[i] == valueOf(root, i, inPlace), "count ", count, " in place ", inPlace, " element ", i);
      }
    }
  });
}

// A ring of Send/Recv in one group: device to device, and host to device and back.
TEST_P(DeviceBuffers, SendRecvRingBetweenDeviceAndHostBuffers) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), 4, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    const int nranks = 4, next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (size_t count : kCounts) {
      for (int round = 0; round < 3; ++round) {
        DeviceInts out(count), in(count);
        std::vector<int32_t> hostOut = valuesOf(rank, count, 0, round), hostIn(count, -1);
        out.write(hostOut);
        const bool sendFromHost = round == 1, recvIntoHost = round == 2;
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        RANK_CHECK_SUCCESS(
            slimecclSend(sendFromHost ? hostOut.data() : out.data(), count, slimecclInt32, next, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(
            slimecclRecv(recvIntoHost ? hostIn.data() : in.data(), count, slimecclInt32, prev, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
        const std::vector<int32_t> got = recvIntoHost ? hostIn : in.read();
        for (size_t i = 0; i < count; ++i)
          RANK_CHECK(got[i] == valueOf(prev, i, round), "count ", count, " round ", round, " element ", i);
      }
    }
  });
}

// Returns once every rank has called it (an AllReduce of host memory on the NULL stream).
void barrier(slimecclComm_t comm) {
  int32_t token = 0;
  RANK_CHECK_SUCCESS(slimecclAllReduce(&token, &token, 1, slimecclInt32, slimecclSum, comm, nullptr), comm);
}

// Rounds of copy in, AllGather, AllReduce, copy out, all queued on one CUDA stream with no wait
// between them: each op must start after the copy before it and end before the copy after it.
// Ranks that are threads share a GPU context, where cudaMalloc, cudaMemset and cudaFree may wait
// for every stream, including a peer's stream held by an op that waits for this rank: so all
// allocation is done before the first op and all freeing after the last (barriers), and the CUDA
// stream is non-blocking, in no order with the legacy default stream, as NCCL advises too.
TEST_P(DeviceBuffers, CudaOrderedStreamKeepsTheOrderOfItsCudaStream) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    cudaStream_t cuda = nullptr;
    CUDA_RANK_CHECK(cudaStreamCreateWithFlags(&cuda, cudaStreamNonBlocking));
    slimecclStream_t stream = nullptr;
    RANK_CHECK_SUCCESS(slimecclStreamCreateFromCuda(&stream, cuda), nullptr);
    const size_t count = 70001;
    const int rounds = 5;
    DeviceInts send(count), gathered(count * kRanks), reduced(count);
    int32_t *hostIn = nullptr, *hostGathered = nullptr, *hostReduced = nullptr;
    CUDA_RANK_CHECK(cudaMallocHost(reinterpret_cast<void**>(&hostIn), rounds * count * sizeof(int32_t)));
    CUDA_RANK_CHECK(cudaMallocHost(reinterpret_cast<void**>(&hostGathered), rounds * count * kRanks * sizeof(int32_t)));
    CUDA_RANK_CHECK(cudaMallocHost(reinterpret_cast<void**>(&hostReduced), rounds * count * sizeof(int32_t)));
    for (int round = 0; round < rounds; ++round)
      for (size_t i = 0; i < count; ++i) hostIn[round * count + i] = valueOf(rank, i, round);
    barrier(comm);
    for (int round = 0; round < rounds; ++round) {
      CUDA_RANK_CHECK(cudaMemcpyAsync(send.data(), hostIn + round * count, send.bytes(), cudaMemcpyHostToDevice, cuda));
      RANK_CHECK_SUCCESS(slimecclAllGather(send.data(), gathered.data(), count, slimecclInt32, comm, stream), comm);
      RANK_CHECK_SUCCESS(
          slimecclAllReduce(send.data(), reduced.data(), count, slimecclInt32, slimecclSum, comm, stream), comm);
      CUDA_RANK_CHECK(cudaMemcpyAsync(hostGathered + round * count * kRanks, gathered.data(), gathered.bytes(),
                                      cudaMemcpyDeviceToHost, cuda));
      CUDA_RANK_CHECK(
          cudaMemcpyAsync(hostReduced + round * count, reduced.data(), reduced.bytes(), cudaMemcpyDeviceToHost, cuda));
    }
    CUDA_RANK_CHECK(cudaStreamSynchronize(cuda));
    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), nullptr);
    RANK_CHECK_SUCCESS(slimecclStreamQuery(stream), nullptr);
    for (int round = 0; round < rounds; ++round)
      for (size_t i = 0; i < count; ++i) {
        for (int r = 0; r < kRanks; ++r)
          RANK_CHECK(hostGathered[(round * kRanks + r) * count + i] == valueOf(r, i, round), "round ", round,
                     " AllGather block ", r, " element ", i);
        const int32_t sum = valueOf(0, i, round) + valueOf(1, i, round) + valueOf(2, i, round);
        RANK_CHECK(hostReduced[round * count + i] == sum, "round ", round, " AllReduce element ", i);
      }
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
    CUDA_RANK_CHECK(cudaStreamDestroy(cuda));
    barrier(comm);
    cudaFreeHost(hostIn);
    cudaFreeHost(hostGathered);
    cudaFreeHost(hostReduced);
  });
}

// A host stream (slimecclStreamCreate) runs ops on device buffers on its own thread.
TEST_P(DeviceBuffers, HostStreamRunsOpsOnDeviceBuffers) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), kRanks, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    slimecclStream_t stream = nullptr;
    RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), nullptr);
    const size_t count = 4100;
    DeviceInts send(count), recv(count * kRanks);
    send.write(valuesOf(rank, count));
    RANK_CHECK_SUCCESS(slimecclAllGather(send.data(), recv.data(), count, slimecclInt32, comm, stream), comm);
    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), nullptr);
    const std::vector<int32_t> got = recv.read();
    for (int r = 0; r < kRanks; ++r)
      for (size_t i = 0; i < count; ++i) RANK_CHECK(got[r * count + i] == valueOf(r, i), "block ", r, " element ", i);
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), nullptr);
  });
}

// On device buffers the blocks are handed on in a CUDA stream's order: the NULL stream has none.
TEST_P(DeviceBuffers, OverlapCallsOnDeviceBuffersNeedACudaOrderedStream) {
  SKIP_WITHOUT_GPU();
  runRanks(GetParam(), 2, [](int rank, slimecclComm_t comm) {
    useGpuOf(rank);
    DeviceInts send(16), recv(32);
    auto never = [](int, void*, size_t, void*) {};
    RANK_CHECK_RESULT(
        slimecclInvalidUsage,
        slimecclAllGatherOverlap(send.data(), recv.data(), 16, slimecclInt32, never, nullptr, comm, nullptr), comm);
    const std::string sentence = lastErrorText(comm);
    RANK_CHECK(sentence.find("CUDA device memory") != std::string::npos, sentence);
    RANK_CHECK(sentence.find("slimecclStreamCreateFromCuda") != std::string::npos, sentence);
    RANK_CHECK(sentence.find("rank " + std::to_string(rank)) != std::string::npos, sentence);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, DeviceBuffers,
                         ::testing::Values(Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads),
                         [](const auto& info) { return std::string(launchName(info.param)); });

TEST(CudaOrderedStream, WithoutAGpuItIsInvalidUsageWithASentence) {
  if (gpuUsable()) GTEST_SKIP() << "a GPU is here: the other tests use CUDA-ordered streams";
  slimecclStream_t stream = nullptr;
  EXPECT_EQ(slimecclStreamCreateFromCuda(&stream, nullptr), slimecclInvalidUsage);
  EXPECT_EQ(stream, nullptr);
  const std::string sentence = slimecclGetLastError(nullptr);
  EXPECT_NE(sentence.find("StreamCreateFromCuda"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("CUDA"), std::string::npos) << sentence;
}

TEST(CudaOrderedStream, ANullStreamArgumentIsInvalidArgument) {
  EXPECT_EQ(slimecclStreamCreateFromCuda(nullptr, nullptr), slimecclInvalidArgument);
  EXPECT_NE(std::string(slimecclGetLastError(nullptr)).find("stream is NULL"), std::string::npos);
}

}  // namespace
}  // namespace slimeccl_test
