// Every entry point rejects bad arguments with InvalidArgument or InvalidUsage and a sentence in
// slimecclGetLastError, and nothing crashes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "entry_points.h"
#include "rank_check.h"
#include "single_rank_comm.h"

namespace slimeccl_test {
namespace {

const slimecclDataType_t kBadDatatypes[] = {static_cast<slimecclDataType_t>(42), slimecclNumTypes,
                                            static_cast<slimecclDataType_t>(-1)};
const slimecclRedOp_t kBadRedOps[] = {static_cast<slimecclRedOp_t>(42), slimecclNumOps,
                                      static_cast<slimecclRedOp_t>(-1)};

using ArgumentValidation = SingleRankComm;

TEST_F(ArgumentValidation, NullCommIsInvalidArgumentForEveryOperation) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    CallArgs args = valid_call_args(comm_, buffers);
    args.comm = nullptr;
    expect_rejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL comm");
  }
}

TEST_F(ArgumentValidation, NullCommIsInvalidArgumentForCommFunctions) {
  int value = 0;
  slimecclResult_t async_error = slimecclSuccess;
  slimecclComm_t child = nullptr;
  expect_rejected(slimecclInvalidArgument, slimecclCommCount(nullptr, &value), "slimecclCommCount");
  expect_rejected(slimecclInvalidArgument, slimecclCommUserRank(nullptr, &value), "slimecclCommUserRank");
  expect_rejected(slimecclInvalidArgument, slimecclCommGetAsyncError(nullptr, &async_error),
                  "slimecclCommGetAsyncError");
  expect_rejected(slimecclInvalidArgument, slimecclCommSplit(nullptr, 0, 0, &child, nullptr), "slimecclCommSplit");
  expect_rejected(slimecclInvalidArgument, slimecclCommFinalize(nullptr), "slimecclCommFinalize");
  expect_rejected(slimecclInvalidArgument, slimecclCommDestroy(nullptr), "slimecclCommDestroy");
  expect_rejected(slimecclInvalidArgument, slimecclCommAbort(nullptr), "slimecclCommAbort");
}

TEST_F(ArgumentValidation, DatatypeOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    for (slimecclDataType_t datatype : kBadDatatypes) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.datatype = datatype;
      expect_rejected(slimecclInvalidArgument, entry.call(args),
                      concat(entry.name, " with datatype ", static_cast<int>(datatype)));
    }
  }
}

TEST_F(ArgumentValidation, NullBufferWithElementsIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    if (entry.uses & kUsesSendbuff) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.sendbuff = nullptr;
      expect_rejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL send buffer");
    }
    if (entry.uses & kUsesRecvbuff) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.recvbuff = nullptr;
      expect_rejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL receive buffer");
    }
  }
}

TEST_F(ArgumentValidation, PeerOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    if (!(entry.uses & kUsesPeer)) continue;
    for (int peer : {-1, 1, 1000}) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.peer = peer;
      expect_rejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with peer ", peer));
    }
  }
}

TEST_F(ArgumentValidation, RootOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    if (!(entry.uses & kUsesRoot)) continue;
    for (int root : {-1, 1, 1000}) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.root = root;
      expect_rejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with root ", root));
    }
  }
}

TEST_F(ArgumentValidation, RedOpOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    if (!(entry.uses & kUsesRedOp)) continue;
    for (slimecclRedOp_t op : kBadRedOps) {
      CallArgs args = valid_call_args(comm_, buffers);
      args.op = op;
      expect_rejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with op ", static_cast<int>(op)));
    }
  }
}

TEST_F(ArgumentValidation, ZeroCountAllGatherSucceeds) {
  CallBuffers buffers;
  std::memset(buffers.recv, 0x5A, sizeof(buffers.recv));
  EXPECT_EQ(slimecclSuccess, slimecclAllGather(buffers.send, buffers.recv, 0, slimecclFloat32, comm_, nullptr))
      << last_error_text(comm_);
  EXPECT_EQ(slimecclSuccess, slimecclAllGather(nullptr, nullptr, 0, slimecclFloat32, comm_, nullptr))
      << "NULL buffers are fine when there is nothing to move; " << last_error_text(comm_);
  EXPECT_EQ(std::vector<unsigned char>(sizeof(buffers.recv), 0x5A),
            std::vector<unsigned char>(buffers.recv, buffers.recv + sizeof(buffers.recv)))
      << "an empty AllGather wrote to the receive buffer";
}

TEST_F(ArgumentValidation, NullResultPointersAreInvalidArgument) {
  slimecclStream_t* no_stream = nullptr;
  expect_rejected(slimecclInvalidArgument, slimecclCommCount(comm_, nullptr), "slimecclCommCount");
  expect_rejected(slimecclInvalidArgument, slimecclCommUserRank(comm_, nullptr), "slimecclCommUserRank");
  expect_rejected(slimecclInvalidArgument, slimecclCommGetAsyncError(comm_, nullptr), "slimecclCommGetAsyncError");
  expect_rejected(slimecclInvalidArgument, slimecclGetVersion(nullptr), "slimecclGetVersion");
  expect_rejected(slimecclInvalidArgument, slimecclGetUniqueId(nullptr), "slimecclGetUniqueId");
  expect_rejected(slimecclInvalidArgument, slimecclStreamCreate(no_stream), "slimecclStreamCreate");
  expect_rejected(slimecclInvalidArgument, slimecclCommSplit(comm_, 0, 0, nullptr, nullptr),
                  "slimecclCommSplit with a NULL newcomm");
}

// Stream handles that are not live streams are refused without being read: the values CUDA gives
// its special streams (cudaStreamLegacy 0x1, cudaStreamPerThread 0x2), a destroyed stream and the
// address of something else. The comm works on afterwards.
TEST_F(ArgumentValidation, StreamsThatAreNotLiveAreInvalidArgument) {
  slimecclStream_t destroyed = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclStreamCreate(&destroyed)) << last_error_text(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclStreamDestroy(destroyed)) << last_error_text(nullptr);
  int foreign = 0;
  const slimecclStream_t not_live[] = {reinterpret_cast<slimecclStream_t>(0x1), reinterpret_cast<slimecclStream_t>(0x2),
                                       destroyed, reinterpret_cast<slimecclStream_t>(&foreign)};
  const std::vector<int> sent = {2, 7, 1, 8};
  std::vector<int> received(sent.size(), -1);
  for (slimecclStream_t stream : not_live) {
    const std::string which = concat(" on stream ", static_cast<const void*>(stream));
    expect_rejected(slimecclInvalidArgument,
                    slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, stream),
                    "slimecclAllGather" + which);
    EXPECT_NE(last_error_text(comm_).find("is not a live slimecclStream_t"), std::string::npos)
        << last_error_text(comm_);
    expect_rejected(slimecclInvalidArgument, slimecclSend(sent.data(), sent.size(), slimecclInt32, 0, comm_, stream),
                    "slimecclSend" + which);
    expect_rejected(slimecclInvalidArgument, slimecclStreamSynchronize(stream), "slimecclStreamSynchronize" + which);
    expect_rejected(slimecclInvalidArgument, slimecclStreamQuery(stream), "slimecclStreamQuery" + which);
    expect_rejected(slimecclInvalidArgument, slimecclStreamDestroy(stream), "slimecclStreamDestroy" + which);
  }
  EXPECT_EQ(std::vector<int>(sent.size(), -1), received);
  ASSERT_EQ(slimecclSuccess,
            slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, nullptr))
      << last_error_text(comm_);
  EXPECT_EQ(sent, received);
}

TEST_F(ArgumentValidation, GroupEndWithoutGroupStartIsInvalidUsage) {
  expect_rejected(slimecclInvalidUsage, slimecclGroupEnd(), "slimecclGroupEnd");
}

TEST_F(ArgumentValidation, ValidationErrorsLeaveTheCommUsable) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points()) {
    CallArgs args = valid_call_args(comm_, buffers);
    args.datatype = kBadDatatypes[0];
    EXPECT_EQ(slimecclInvalidArgument, entry.call(args)) << entry.name;
  }
  const std::vector<int> sent = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9};
  std::vector<int> received(sent.size(), -1);
  ASSERT_EQ(slimecclSuccess,
            slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, nullptr))
      << last_error_text(comm_);
  EXPECT_EQ(sent, received);
  slimecclResult_t async_error = slimecclInternalError;
  ASSERT_EQ(slimecclSuccess, slimecclCommGetAsyncError(comm_, &async_error));
  EXPECT_EQ(slimecclSuccess, async_error);
}

TEST(CommInitArguments, BadInitRankArgumentsAreInvalidArgument) {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << last_error_text(nullptr);
  slimecclComm_t comm = nullptr;
  // Each must be rejected at once, without waiting for ranks that will never come.
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 0, id, 0), "nranks 0");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, -1, id, 0), "nranks -1");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 2, id, -1), "rank -1 of 2");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 2, id, 2), "rank 2 of 2");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRank(nullptr, 1, id, 0), "NULL comm pointer");
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 1, &config),
                  "slimecclCommInitRankConfig with rank 1 of 1");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitRankConfig(nullptr, 1, id, 0, &config),
                  "slimecclCommInitRankConfig with a NULL comm pointer");
  // A GPU this process does not have (none here, or far past the count on a GPU machine).
  for (int device : {-1, 4096}) {
    config.cudaDevice = device;
    expect_rejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 0, &config),
                    "config cudaDevice " + std::to_string(device));
    EXPECT_NE(std::string(slimecclGetLastError(nullptr))
                  .find("config cudaDevice " + std::to_string(device) + " is not a GPU"),
              std::string::npos)
        << slimecclGetLastError(nullptr);
  }
  config.cudaDevice = SLIMECCL_CONFIG_UNDEF_INT;
  for (int ctas : {0, -3, 1025}) {
    config.maxCTAs = ctas;
    expect_rejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 0, &config),
                    "config maxCTAs " + std::to_string(ctas));
    EXPECT_NE(std::string(slimecclGetLastError(nullptr))
                  .find("config maxCTAs " + std::to_string(ctas) + " is not between 1 and 1024"),
              std::string::npos)
        << slimecclGetLastError(nullptr);
  }
}

// A program built against a header whose config ends before maxCTAs passes a smaller size: the
// config is taken, and whatever lies past its end is not read.
TEST(CommInitArguments, ConfigWithoutMaxCtasIsTaken) {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << last_error_text(nullptr);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.size = offsetof(slimecclConfig_t, maxCTAs);
  config.maxCTAs = -7;
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRankConfig(&comm, 1, id, 0, &config)) << last_error_text(nullptr);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm));
}

// A program built against a header whose config ends before cudaDevice passes a smaller size: the
// config is taken, and whatever lies past its end is not read.
TEST(CommInitArguments, ConfigWithoutCudaDeviceIsTaken) {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << last_error_text(nullptr);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.size = offsetof(slimecclConfig_t, cudaDevice);
  config.cudaDevice = 4096;
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRankConfig(&comm, 1, id, 0, &config)) << last_error_text(nullptr);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm));
}

TEST(CommInitArguments, BadInitAllArgumentsAreInvalidArgument) {
  slimecclComm_t comms[2] = {nullptr, nullptr};
  expect_rejected(slimecclInvalidArgument, slimecclCommInitAll(nullptr, 2, nullptr), "NULL comms");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitAll(comms, 0, nullptr), "nranks 0");
  expect_rejected(slimecclInvalidArgument, slimecclCommInitAll(comms, -1, nullptr), "nranks -1");
}

TEST(FinalizedComm, CallsAfterFinalizeAreInvalidUsage) {
  slimecclUniqueId id{};
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << last_error_text(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRank(&comm, 1, id, 0)) << last_error_text(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommFinalize(comm)) << last_error_text(comm);
  CallBuffers buffers;
  for (const EntryPoint& entry : entry_points())
    expect_rejected(slimecclInvalidUsage, entry.call(valid_call_args(comm, buffers)), entry.name);
  slimecclComm_t child = nullptr;
  expect_rejected(slimecclInvalidUsage, slimecclCommSplit(comm, 0, 0, &child, nullptr), "slimecclCommSplit");
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm)) << last_error_text(nullptr);
}

}  // namespace
}  // namespace slimeccl_test
