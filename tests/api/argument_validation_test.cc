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
  for (const EntryPoint& entry : entryPoints()) {
    CallArgs args = validCallArgs(comm_, buffers);
    args.comm = nullptr;
    expectRejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL comm");
  }
}

TEST_F(ArgumentValidation, NullCommIsInvalidArgumentForCommFunctions) {
  int value = 0;
  slimecclResult_t asyncError = slimecclSuccess;
  slimecclComm_t child = nullptr;
  expectRejected(slimecclInvalidArgument, slimecclCommCount(nullptr, &value), "slimecclCommCount");
  expectRejected(slimecclInvalidArgument, slimecclCommUserRank(nullptr, &value), "slimecclCommUserRank");
  expectRejected(slimecclInvalidArgument, slimecclCommGetAsyncError(nullptr, &asyncError), "slimecclCommGetAsyncError");
  expectRejected(slimecclInvalidArgument, slimecclCommSplit(nullptr, 0, 0, &child, nullptr), "slimecclCommSplit");
  expectRejected(slimecclInvalidArgument, slimecclCommFinalize(nullptr), "slimecclCommFinalize");
  expectRejected(slimecclInvalidArgument, slimecclCommDestroy(nullptr), "slimecclCommDestroy");
  expectRejected(slimecclInvalidArgument, slimecclCommAbort(nullptr), "slimecclCommAbort");
}

TEST_F(ArgumentValidation, DatatypeOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    for (slimecclDataType_t datatype : kBadDatatypes) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.datatype = datatype;
      expectRejected(slimecclInvalidArgument, entry.call(args),
                     concat(entry.name, " with datatype ", static_cast<int>(datatype)));
    }
  }
}

TEST_F(ArgumentValidation, NullBufferWithElementsIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    if (entry.uses & kUsesSendbuff) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.sendbuff = nullptr;
      expectRejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL send buffer");
    }
    if (entry.uses & kUsesRecvbuff) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.recvbuff = nullptr;
      expectRejected(slimecclInvalidArgument, entry.call(args), entry.name + " with a NULL receive buffer");
    }
  }
}

TEST_F(ArgumentValidation, PeerOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    if (!(entry.uses & kUsesPeer)) continue;
    for (int peer : {-1, 1, 1000}) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.peer = peer;
      expectRejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with peer ", peer));
    }
  }
}

TEST_F(ArgumentValidation, RootOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    if (!(entry.uses & kUsesRoot)) continue;
    for (int root : {-1, 1, 1000}) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.root = root;
      expectRejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with root ", root));
    }
  }
}

TEST_F(ArgumentValidation, RedOpOutOfRangeIsInvalidArgument) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    if (!(entry.uses & kUsesRedOp)) continue;
    for (slimecclRedOp_t op : kBadRedOps) {
      CallArgs args = validCallArgs(comm_, buffers);
      args.op = op;
      expectRejected(slimecclInvalidArgument, entry.call(args), concat(entry.name, " with op ", static_cast<int>(op)));
    }
  }
}

TEST_F(ArgumentValidation, ZeroCountAllGatherSucceeds) {
  CallBuffers buffers;
  std::memset(buffers.recv, 0x5A, sizeof(buffers.recv));
  EXPECT_EQ(slimecclSuccess, slimecclAllGather(buffers.send, buffers.recv, 0, slimecclFloat32, comm_, nullptr))
      << lastErrorText(comm_);
  EXPECT_EQ(slimecclSuccess, slimecclAllGather(nullptr, nullptr, 0, slimecclFloat32, comm_, nullptr))
      << "NULL buffers are fine when there is nothing to move; " << lastErrorText(comm_);
  EXPECT_EQ(std::vector<unsigned char>(sizeof(buffers.recv), 0x5A),
            std::vector<unsigned char>(buffers.recv, buffers.recv + sizeof(buffers.recv)))
      << "an empty AllGather wrote to the receive buffer";
}

TEST_F(ArgumentValidation, NullResultPointersAreInvalidArgument) {
  slimecclStream_t* noStream = nullptr;
  expectRejected(slimecclInvalidArgument, slimecclCommCount(comm_, nullptr), "slimecclCommCount");
  expectRejected(slimecclInvalidArgument, slimecclCommUserRank(comm_, nullptr), "slimecclCommUserRank");
  expectRejected(slimecclInvalidArgument, slimecclCommGetAsyncError(comm_, nullptr), "slimecclCommGetAsyncError");
  expectRejected(slimecclInvalidArgument, slimecclGetVersion(nullptr), "slimecclGetVersion");
  expectRejected(slimecclInvalidArgument, slimecclGetUniqueId(nullptr), "slimecclGetUniqueId");
  expectRejected(slimecclInvalidArgument, slimecclStreamCreate(noStream), "slimecclStreamCreate");
  expectRejected(slimecclInvalidArgument, slimecclCommSplit(comm_, 0, 0, nullptr, nullptr),
                 "slimecclCommSplit with a NULL newcomm");
}

// Stream handles that are not live streams are refused without being read: the values CUDA gives
// its special streams (cudaStreamLegacy 0x1, cudaStreamPerThread 0x2), a destroyed stream and the
// address of something else. The comm works on afterwards.
TEST_F(ArgumentValidation, StreamsThatAreNotLiveAreInvalidArgument) {
  slimecclStream_t destroyed = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclStreamCreate(&destroyed)) << lastErrorText(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclStreamDestroy(destroyed)) << lastErrorText(nullptr);
  int foreign = 0;
  const slimecclStream_t notLive[] = {reinterpret_cast<slimecclStream_t>(0x1), reinterpret_cast<slimecclStream_t>(0x2),
                                      destroyed, reinterpret_cast<slimecclStream_t>(&foreign)};
  const std::vector<int> sent = {2, 7, 1, 8};
  std::vector<int> received(sent.size(), -1);
  for (slimecclStream_t stream : notLive) {
    const std::string which = concat(" on stream ", static_cast<const void*>(stream));
    expectRejected(slimecclInvalidArgument,
                   slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, stream),
                   "slimecclAllGather" + which);
    EXPECT_NE(lastErrorText(comm_).find("is not a live slimecclStream_t"), std::string::npos) << lastErrorText(comm_);
    expectRejected(slimecclInvalidArgument, slimecclSend(sent.data(), sent.size(), slimecclInt32, 0, comm_, stream),
                   "slimecclSend" + which);
    expectRejected(slimecclInvalidArgument, slimecclStreamSynchronize(stream), "slimecclStreamSynchronize" + which);
    expectRejected(slimecclInvalidArgument, slimecclStreamQuery(stream), "slimecclStreamQuery" + which);
    expectRejected(slimecclInvalidArgument, slimecclStreamDestroy(stream), "slimecclStreamDestroy" + which);
  }
  EXPECT_EQ(std::vector<int>(sent.size(), -1), received);
  ASSERT_EQ(slimecclSuccess,
            slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, nullptr))
      << lastErrorText(comm_);
  EXPECT_EQ(sent, received);
}

TEST_F(ArgumentValidation, GroupEndWithoutGroupStartIsInvalidUsage) {
  expectRejected(slimecclInvalidUsage, slimecclGroupEnd(), "slimecclGroupEnd");
}

TEST_F(ArgumentValidation, ValidationErrorsLeaveTheCommUsable) {
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints()) {
    CallArgs args = validCallArgs(comm_, buffers);
    args.datatype = kBadDatatypes[0];
    EXPECT_EQ(slimecclInvalidArgument, entry.call(args)) << entry.name;
  }
  const std::vector<int> sent = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9};
  std::vector<int> received(sent.size(), -1);
  ASSERT_EQ(slimecclSuccess,
            slimecclAllGather(sent.data(), received.data(), sent.size(), slimecclInt32, comm_, nullptr))
      << lastErrorText(comm_);
  EXPECT_EQ(sent, received);
  slimecclResult_t asyncError = slimecclInternalError;
  ASSERT_EQ(slimecclSuccess, slimecclCommGetAsyncError(comm_, &asyncError));
  EXPECT_EQ(slimecclSuccess, asyncError);
}

TEST(CommInitArguments, BadInitRankArgumentsAreInvalidArgument) {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  slimecclComm_t comm = nullptr;
  // Each must be rejected at once, without waiting for ranks that will never come.
  expectRejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 0, id, 0), "nranks 0");
  expectRejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, -1, id, 0), "nranks -1");
  expectRejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 2, id, -1), "rank -1 of 2");
  expectRejected(slimecclInvalidArgument, slimecclCommInitRank(&comm, 2, id, 2), "rank 2 of 2");
  expectRejected(slimecclInvalidArgument, slimecclCommInitRank(nullptr, 1, id, 0), "NULL comm pointer");
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  expectRejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 1, &config),
                 "slimecclCommInitRankConfig with rank 1 of 1");
  expectRejected(slimecclInvalidArgument, slimecclCommInitRankConfig(nullptr, 1, id, 0, &config),
                 "slimecclCommInitRankConfig with a NULL comm pointer");
  // A GPU this process does not have (none here, or far past the count on a GPU machine).
  for (int device : {-1, 4096}) {
    config.cudaDevice = device;
    expectRejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 0, &config),
                   "config cudaDevice " + std::to_string(device));
    EXPECT_NE(std::string(slimecclGetLastError(nullptr))
                  .find("config cudaDevice " + std::to_string(device) + " is not a GPU"),
              std::string::npos)
        << slimecclGetLastError(nullptr);
  }
  config.cudaDevice = SLIMECCL_CONFIG_UNDEF_INT;
  for (int ctas : {0, -3, 1025}) {
    config.maxCTAs = ctas;
    expectRejected(slimecclInvalidArgument, slimecclCommInitRankConfig(&comm, 1, id, 0, &config),
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
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.size = offsetof(slimecclConfig_t, maxCTAs);
  config.maxCTAs = -7;
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRankConfig(&comm, 1, id, 0, &config)) << lastErrorText(nullptr);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm));
}

// A program built against a header whose config ends before cudaDevice passes a smaller size: the
// config is taken, and whatever lies past its end is not read.
TEST(CommInitArguments, ConfigWithoutCudaDeviceIsTaken) {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.size = offsetof(slimecclConfig_t, cudaDevice);
  config.cudaDevice = 4096;
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRankConfig(&comm, 1, id, 0, &config)) << lastErrorText(nullptr);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm));
}

TEST(CommInitArguments, BadInitAllArgumentsAreInvalidArgument) {
  slimecclComm_t comms[2] = {nullptr, nullptr};
  expectRejected(slimecclInvalidArgument, slimecclCommInitAll(nullptr, 2, nullptr), "NULL comms");
  expectRejected(slimecclInvalidArgument, slimecclCommInitAll(comms, 0, nullptr), "nranks 0");
  expectRejected(slimecclInvalidArgument, slimecclCommInitAll(comms, -1, nullptr), "nranks -1");
}

TEST(FinalizedComm, CallsAfterFinalizeAreInvalidUsage) {
  slimecclUniqueId id{};
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRank(&comm, 1, id, 0)) << lastErrorText(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommFinalize(comm)) << lastErrorText(comm);
  CallBuffers buffers;
  for (const EntryPoint& entry : entryPoints())
    expectRejected(slimecclInvalidUsage, entry.call(validCallArgs(comm, buffers)), entry.name);
  slimecclComm_t child = nullptr;
  expectRejected(slimecclInvalidUsage, slimecclCommSplit(comm, 0, 0, &child, nullptr), "slimecclCommSplit");
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm)) << lastErrorText(nullptr);
}

}  // namespace
}  // namespace slimeccl_test
