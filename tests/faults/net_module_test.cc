// Asking for a net module that is neither built in nor loadable as a plugin is a clear error.
#include <gtest/gtest.h>

#include <string>

#include "slimeccl.h"

namespace {

TEST(NetModule, UnknownModuleFailsInitNamingThePluginFile) {
  slimecclUniqueId id;
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.netName = "nosuchnet";
  config.timeoutMs = 5000;
  slimecclComm_t comm = nullptr;
  EXPECT_EQ(slimecclCommInitRankConfig(&comm, 1, id, 0, &config), slimecclInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  std::string error = slimecclGetLastError(nullptr);
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("libslimeccl-net-nosuchnet.so"), std::string::npos) << error;
}

TEST(NetModule, ForcedSocketModuleWorksForOneRank) {
  slimecclUniqueId id;
  ASSERT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.netName = "socket";
  slimecclComm_t comm = nullptr;
  ASSERT_EQ(slimecclCommInitRankConfig(&comm, 1, id, 0, &config), slimecclSuccess) << slimecclGetLastError(nullptr);
  int sent = 42, received = 0;
  ASSERT_EQ(slimecclGroupStart(), slimecclSuccess);
  slimecclSend(&sent, 1, slimecclInt32, 0, comm, nullptr);
  slimecclRecv(&received, 1, slimecclInt32, 0, comm, nullptr);
  ASSERT_EQ(slimecclGroupEnd(), slimecclSuccess) << slimecclGetLastError(comm);
  EXPECT_EQ(received, 42);
  slimecclCommDestroy(comm);
}

}  // namespace
