// Command-line handling.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher_process.h"

namespace slimeccl::launcher_test {
namespace {

class BadArguments : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(BadArguments, ExitWith2AndAnErrorWithoutStartingRanks) {
  LauncherResult result = runLauncher(GetParam());

  EXPECT_EQ(result.exitCode, 2) << result.describe();
  EXPECT_EQ(result.err.rfind("slimeccl-run: error: ", 0), 0u) << result.describe();
  EXPECT_EQ(result.out, "") << "no rank may run\n" << result.describe();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadArguments,
    ::testing::Values(
        std::vector<std::string>{}, std::vector<std::string>{"echo", "ran"}, std::vector<std::string>{"-n"},
        std::vector<std::string>{"-n", "2"}, std::vector<std::string>{"-n", "2", "--"},
        std::vector<std::string>{"-n", "0", "echo", "ran"}, std::vector<std::string>{"-n", "-1", "echo", "ran"},
        std::vector<std::string>{"-n", "two", "echo", "ran"}, std::vector<std::string>{"-n", "2x", "echo", "ran"},
        std::vector<std::string>{"--bogus", "-n", "1", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--nnodes", "2", "--node-rank", "0", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--nnodes", "2", "--master", "h:1", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--nnodes", "2", "--node-rank", "2", "--master", "h:1", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--nnodes", "0", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--master", "no-port", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--master", "h:70000", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--timeout", "0", "echo", "ran"},
        std::vector<std::string>{"-n", "1", "--timeout", "soon", "echo", "ran"},
        std::vector<std::string>{"-n", "100000", "--nnodes", "100000", "--node-rank", "0", "--master", "h:1", "echo",
                                 "ran"}));

TEST(Arguments, ErrorSaysWhatIsWrong) {
  EXPECT_NE(runLauncher({"-n", "0", "true"}).err.find("-n must be at least 1"), std::string::npos);
  EXPECT_NE(runLauncher({"-n", "2"}).err.find("no command"), std::string::npos);
  EXPECT_NE(runLauncher({"-n", "1", "--frobnicate", "true"}).err.find("unknown option '--frobnicate'"),
            std::string::npos);
}

TEST(Arguments, HelpPrintsUsageAndSucceeds) {
  for (const char* flag : {"-h", "--help"}) {
    LauncherResult result = runLauncher({flag});
    EXPECT_EQ(result.exitCode, 0) << result.describe();
    EXPECT_EQ(result.out.rfind("Usage: slimeccl-run -n N", 0), 0u) << result.describe();
    EXPECT_NE(result.out.find("--tag-output"), std::string::npos);
  }
}

TEST(Arguments, OptionsAfterTheCommandBelongToTheCommand) {
  LauncherResult result = runLauncher({"-n", "1", "printf", "%s\\n", "-n", "--tag-output"});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(result.out, "-n\n--tag-output\n");
}

TEST(Arguments, DoubleDashEndsTheOptions) {
  LauncherResult result = runLauncher({"-n", "1", "--", "sh", "-c", "echo \"$0\"", "--help"});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(result.out, "--help\n");
}

TEST(Arguments, EqualsAndGluedFormsAreAccepted) {
  LauncherResult result = runLauncher({"-n2", "--nnodes=2", "--node-rank=1", "--master=127.0.0.1:5000", "--timeout=20",
                                       "sh", "-c", "echo $SLIMECCL_RANK"});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(result.out.size(), 4u) << result.describe();
  EXPECT_NE(result.out.find("2\n"), std::string::npos) << result.describe();
  EXPECT_NE(result.out.find("3\n"), std::string::npos) << result.describe();
}

}  // namespace
}  // namespace slimeccl::launcher_test
