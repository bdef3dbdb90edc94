// What each rank finds in its environment.

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launcher_process.h"

namespace slimeccl::launcher_test {
namespace {

// One line per rank: RANK NRANKS LOCAL_RANK LOCAL_NRANKS COMM_ID SECRET.
const std::string kPrintRankEnvironment =
    "echo \"$SLIMECCL_RANK $SLIMECCL_NRANKS $SLIMECCL_LOCAL_RANK $SLIMECCL_LOCAL_NRANKS "
    "$SLIMECCL_COMM_ID $SLIMECCL_COMM_SECRET\"";

struct RankEnvironment {
  int rank = -1;
  int nranks = -1;
  int localRank = -1;
  int localNranks = -1;
  std::string commId;
  std::string secret;
};

// Runs the launcher with `options` and the printing command; returns the
// ranks' environments ordered by rank.
std::vector<RankEnvironment> rankEnvironments(std::vector<std::string> options,
                                              const std::map<std::string, std::string>& environment = {}) {
  options.insert(options.end(), {"sh", "-c", kPrintRankEnvironment});
  LauncherResult result = runLauncher(LauncherInput{options, environment, {}});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  std::vector<RankEnvironment> ranks;
  for (const std::string& line : result.outLines()) {
    RankEnvironment rank;
    std::istringstream fields(line);
    fields >> rank.rank >> rank.nranks >> rank.localRank >> rank.localNranks >> rank.commId >> rank.secret;
    EXPECT_FALSE(fields.fail()) << "unparsable line: " << line;
    ranks.push_back(rank);
  }
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return ranks;
}

bool isSecret(const std::string& text) { return std::regex_match(text, std::regex("[0-9a-f]{32}")); }

class SingleNodeEnvironment : public ::testing::TestWithParam<int> {};

TEST_P(SingleNodeEnvironment, EachRankGetsItsRankAndTheSharedRendezvous) {
  const int n = GetParam();
  std::vector<RankEnvironment> ranks = rankEnvironments({"-n", std::to_string(n)});

  ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
  std::smatch port;
  ASSERT_TRUE(std::regex_match(ranks[0].commId, port, std::regex(R"(127\.0\.0\.1:(\d+))"))) << ranks[0].commId;
  EXPECT_GT(std::stoi(port[1]), 0);
  EXPECT_LE(std::stoi(port[1]), 65535);
  EXPECT_TRUE(isSecret(ranks[0].secret)) << ranks[0].secret;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(ranks[i].rank, i);
    EXPECT_EQ(ranks[i].nranks, n);
    EXPECT_EQ(ranks[i].localRank, i);
    EXPECT_EQ(ranks[i].localNranks, n);
    EXPECT_EQ(ranks[i].commId, ranks[0].commId);
    EXPECT_EQ(ranks[i].secret, ranks[0].secret);
  }
}

INSTANTIATE_TEST_SUITE_P(RankCounts, SingleNodeEnvironment, ::testing::Values(1, 3, 4));

TEST(Environment, EachLaunchGetsAFreshSecret) {
  std::vector<RankEnvironment> first = rankEnvironments({"-n", "1"});
  std::vector<RankEnvironment> second = rankEnvironments({"-n", "1"});
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(first[0].secret, second[0].secret);
}

TEST(Environment, CallerCommIdAndSecretAreKeptWithoutMaster) {
  const std::string secret = "00112233445566778899aabbccddeeff";
  std::vector<RankEnvironment> ranks =
      rankEnvironments({"-n", "2"}, {{"SLIMECCL_COMM_ID", "10.1.2.3:4567"}, {"SLIMECCL_COMM_SECRET", secret}});
  ASSERT_EQ(ranks.size(), 2u);
  for (const RankEnvironment& rank : ranks) {
    EXPECT_EQ(rank.commId, "10.1.2.3:4567");
    EXPECT_EQ(rank.secret, secret);
  }
}

TEST(Environment, CallerRankVariablesAreReplaced) {
  std::vector<RankEnvironment> ranks =
      rankEnvironments({"-n", "2"}, {{"SLIMECCL_RANK", "7"}, {"SLIMECCL_NRANKS", "9"}, {"SLIMECCL_LOCAL_RANK", "7"}});
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].rank, 0);
  EXPECT_EQ(ranks[1].rank, 1);
  EXPECT_EQ(ranks[1].nranks, 2);
  EXPECT_EQ(ranks[1].localRank, 1);
}

TEST(MultiNodeEnvironment, RanksAreOffsetByNodeRank) {
  std::vector<RankEnvironment> ranks =
      rankEnvironments({"-n", "3", "--nnodes", "2", "--node-rank", "1", "--master", "127.0.0.1:5000"});

  ASSERT_EQ(ranks.size(), 3u);
  for (int local = 0; local < 3; ++local) {
    EXPECT_EQ(ranks[local].rank, 3 + local);
    EXPECT_EQ(ranks[local].nranks, 6);
    EXPECT_EQ(ranks[local].localRank, local);
    EXPECT_EQ(ranks[local].localNranks, 3);
    EXPECT_EQ(ranks[local].commId, "127.0.0.1:5000");
    EXPECT_TRUE(isSecret(ranks[local].secret)) << ranks[local].secret;
    EXPECT_EQ(ranks[local].secret, ranks[0].secret);
  }
}

TEST(MultiNodeEnvironment, AllNodesDeriveTheSameSecretFromTheMaster) {
  std::vector<RankEnvironment> node0 =
      rankEnvironments({"-n", "2", "--nnodes", "2", "--node-rank", "0", "--master", "127.0.0.1:5000"});
  std::vector<RankEnvironment> node1 =
      rankEnvironments({"-n", "2", "--nnodes", "2", "--node-rank", "1", "--master", "127.0.0.1:5000"});
  std::vector<RankEnvironment> otherMaster =
      rankEnvironments({"-n", "2", "--nnodes", "2", "--node-rank", "1", "--master", "127.0.0.1:5001"});

  ASSERT_EQ(node0.size(), 2u);
  ASSERT_EQ(node1.size(), 2u);
  ASSERT_EQ(otherMaster.size(), 2u);
  EXPECT_EQ(node0[0].rank, 0);
  EXPECT_EQ(node1[0].rank, 2);
  EXPECT_EQ(node0[0].secret, node1[0].secret);
  EXPECT_NE(node0[0].secret, otherMaster[0].secret);
}

TEST(MultiNodeEnvironment, SecretFromTheEnvironmentWinsAndMasterOverridesCommId) {
  const std::string secret = "ffeeddccbbaa99887766554433221100";
  std::vector<RankEnvironment> ranks =
      rankEnvironments({"-n", "1", "--nnodes", "2", "--node-rank", "1", "--master", "node0.example:6000"},
                       {{"SLIMECCL_COMM_ID", "10.9.9.9:1"}, {"SLIMECCL_COMM_SECRET", secret}});
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].commId, "node0.example:6000");
  EXPECT_EQ(ranks[0].secret, secret);
}

}  // namespace
}  // namespace slimeccl::launcher_test

namespace slimeccl::launcher_test {
namespace {

std::vector<std::string> interfaceSeenByRanks(std::vector<std::string> options,
                                              const std::map<std::string, std::string>& environment) {
  options.insert(options.end(), {"sh", "-c", "echo \"ifname=$SLIMECCL_SOCKET_IFNAME\""});
  LauncherResult result = runLauncher(LauncherInput{options, environment, {}});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  return result.outLines();
}

TEST(InterfaceEnvironment, SingleNodeJobsStayOnLoopback) {
  EXPECT_EQ(interfaceSeenByRanks({"-n", "2"}, {}), (std::vector<std::string>{"ifname=lo", "ifname=lo"}));
}

TEST(InterfaceEnvironment, TheCallersChoiceWins) {
  EXPECT_EQ(interfaceSeenByRanks({"-n", "1"}, {{"SLIMECCL_SOCKET_IFNAME", "eth"}}),
            (std::vector<std::string>{"ifname=eth"}));
}

TEST(InterfaceEnvironment, MultiNodeJobsUseTheDefaultInterface) {
  EXPECT_EQ(interfaceSeenByRanks({"-n", "1", "--nnodes", "2", "--node-rank", "1", "--master", "127.0.0.1:5000"}, {}),
            (std::vector<std::string>{"ifname="}));
}

}  // namespace
}  // namespace slimeccl::launcher_test
