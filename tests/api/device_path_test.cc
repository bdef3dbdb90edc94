// What a communicator tells of its device path (slimecclCommGetDevicePathInfo), buffer
// registration, and the device list of slimecclCommInitAll, on any machine: host-memory ops go
// neither GPU to GPU nor through staging; registration checks its arguments and hands out handles
// that deregister once; a device list naming GPUs this process lacks is refused with a sentence.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "rank_check.h"
#include "single_rank_comm.h"

namespace slimeccl_test {
namespace {

class DevicePathInfo : public SingleRankComm {};

TEST_F(DevicePathInfo, HostOpsTakeNeitherDevicePath) {
  std::vector<int> send(16, 7), recv(16, 0);
  ASSERT_EQ(slimecclAllGather(send.data(), recv.data(), 16, slimecclInt32, comm_, nullptr), slimecclSuccess);
  slimecclDevicePathInfo info{-1, 99, 99, 99, 99, 99, 99, -1, 99, 99, -1, -1, 99, 99, 99};
  ASSERT_EQ(slimecclCommGetDevicePathInfo(comm_, &info), slimecclSuccess);
  EXPECT_EQ(info.gpuToGpu, 0);
  EXPECT_EQ(info.opsGpuToGpu, 0u);
  EXPECT_EQ(info.opsStaged, 0u);
  EXPECT_EQ(info.opsBySms, 0u);
  EXPECT_EQ(info.reductionsOneShot + info.reductionsTwoShot + info.reductionsTwoShotSm + info.reductionsRing +
                info.reductionsDirect,
            0u);
  EXPECT_EQ(info.largestGrid, 0);
  EXPECT_EQ(info.overlapAllGathers, 0u);
  EXPECT_EQ(info.stagedChunks, 0u);
  EXPECT_EQ(info.stagingPinned, 0);
  EXPECT_EQ(info.hostTiers, 0);
  EXPECT_EQ(info.tieredAllGathers, 0u);
  EXPECT_EQ(recv, send);
}

TEST_F(DevicePathInfo, NullInfoIsRefused) {
  expectRejected(slimecclInvalidArgument, slimecclCommGetDevicePathInfo(comm_, nullptr), "CommGetDevicePathInfo");
  EXPECT_NE(std::string(slimecclGetLastError(comm_)).find("info is NULL"), std::string::npos)
      << slimecclGetLastError(comm_);
}

TEST(DevicePathInfoArgs, NullCommIsRefused) {
  slimecclDevicePathInfo info{};
  expectRejected(slimecclInvalidArgument, slimecclCommGetDevicePathInfo(nullptr, &info), "CommGetDevicePathInfo");
}

class Registration : public SingleRankComm {};

TEST_F(Registration, HostBuffersRegisterAndDeregisterOnce) {
  std::vector<int> send(64, 3), recv(64, 0);
  void* sendHandle = nullptr;
  void* recvHandle = nullptr;
  ASSERT_EQ(slimecclCommRegister(comm_, send.data(), send.size() * sizeof(int), &sendHandle), slimecclSuccess);
  ASSERT_EQ(slimecclCommRegister(comm_, recv.data(), recv.size() * sizeof(int), &recvHandle), slimecclSuccess);
  EXPECT_NE(sendHandle, nullptr);
  EXPECT_NE(sendHandle, recvHandle);
  // Registered buffers serve ops as any other.
  ASSERT_EQ(slimecclAllGather(send.data(), recv.data(), 64, slimecclInt32, comm_, nullptr), slimecclSuccess);
  EXPECT_EQ(recv, send);
  EXPECT_EQ(slimecclCommDeregister(comm_, sendHandle), slimecclSuccess);
  EXPECT_EQ(slimecclCommDeregister(comm_, recvHandle), slimecclSuccess);
  expectRejected(slimecclInvalidArgument, slimecclCommDeregister(comm_, sendHandle), "CommDeregister");
  EXPECT_NE(std::string(slimecclGetLastError(comm_)).find("not a live handle"), std::string::npos)
      << slimecclGetLastError(comm_);
}

TEST_F(Registration, BadArgumentsAreRefusedWithASentence) {
  int word = 0;
  void* handle = &word;
  expectRejected(slimecclInvalidArgument, slimecclCommRegister(comm_, &word, sizeof(word), nullptr), "CommRegister");
  expectRejected(slimecclInvalidArgument, slimecclCommRegister(comm_, nullptr, 4, &handle), "CommRegister");
  EXPECT_EQ(handle, nullptr) << "a refused registration leaves no handle";
  expectRejected(slimecclInvalidArgument, slimecclCommRegister(comm_, &word, 0, &handle), "CommRegister");
  expectRejected(slimecclInvalidArgument, slimecclCommRegister(comm_, &word, SIZE_MAX, &handle), "CommRegister");
  expectRejected(slimecclInvalidArgument, slimecclCommRegister(nullptr, &word, 4, &handle), "CommRegister");
  expectRejected(slimecclInvalidArgument, slimecclCommDeregister(comm_, nullptr), "CommDeregister");
  expectRejected(slimecclInvalidArgument, slimecclCommDeregister(comm_, &word), "CommDeregister");
}

TEST(InitAllDeviceList, GpusThisProcessLacksAreRefused) {
  slimecclComm_t comms[2] = {nullptr, nullptr};
  const int devlist[2] = {0, 4096};
  EXPECT_EQ(slimecclCommInitAll(comms, 2, devlist), slimecclInvalidArgument);
  const std::string why = slimecclGetLastError(nullptr);
  EXPECT_NE(why.find("is not a GPU of this process"), std::string::npos) << why;
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_EQ(comms[1], nullptr);
  const int negative[1] = {-1};
  EXPECT_EQ(slimecclCommInitAll(comms, 1, negative), slimecclInvalidArgument);
}

}  // namespace
}  // namespace slimeccl_test
