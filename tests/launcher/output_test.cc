// The ranks' standard streams: output tagging and who reads stdin.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "launcher_process.h"
#include "scratch_directory.h"

namespace slimeccl::launcher_test {
namespace {

std::vector<std::string> sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(TagOutput, EachLineIsPrefixedWithItsRankOnTheMatchingStream) {
  LauncherResult result =
      runLauncher({"-n", "2", "--tag-output", "sh", "-c",
                   "echo first $SLIMECCL_RANK; echo second $SLIMECCL_RANK; echo oops $SLIMECCL_RANK >&2; printf tail"});

  ASSERT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(sorted(result.outLines()), (std::vector<std::string>{"[0] first 0", "[0] second 0", "[0] tail",
                                                                 "[1] first 1", "[1] second 1", "[1] tail"}))
      << result.describe();
  EXPECT_EQ(sorted(result.errLines()), (std::vector<std::string>{"[0] oops 0", "[1] oops 1"})) << result.describe();
}

TEST(TagOutput, LinesOfConcurrentRanksAreNeverMixed) {
  // Each rank writes many long lines made of its own rank digit; awk's block
  // buffering splits them across pipe reads.
  const int kLines = 400;
  const int kLineLength = 3000;
  LauncherResult result =
      runLauncher({"-n", "4", "--tag-output", "sh", "-c",
                   "awk -v r=\"$SLIMECCL_RANK\" 'BEGIN { s = \"\"; for (j = 0; j < " + std::to_string(kLineLength) +
                       "; j++) s = s r; for (i = 0; i < " + std::to_string(kLines) + "; i++) print s }'"});

  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::map<char, int> linesPerRank;
  for (const std::string& line : result.outLines()) {
    ASSERT_EQ(line.size(), 4u + kLineLength) << line.substr(0, 80);
    char rank = line[1];
    ASSERT_EQ(line.substr(0, 4), std::string("[") + rank + "] ");
    ASSERT_EQ(line.find_first_not_of(rank, 4), std::string::npos) << "mixed line: " << line.substr(0, 80);
    ++linesPerRank[rank];
  }
  EXPECT_EQ(linesPerRank, (std::map<char, int>{{'0', kLines}, {'1', kLines}, {'2', kLines}, {'3', kLines}}));
}

TEST(TagOutput, WithoutTheOptionOutputIsPassedThroughUnchanged) {
  LauncherResult result = runLauncher({"-n", "1", "sh", "-c", "echo plain; echo problem >&2"});
  ASSERT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(result.out, "plain\n");
  EXPECT_EQ(result.err, "problem\n");
}

TEST(Stdin, OnlyRankZeroReadsTheLaunchersStdin) {
  ScratchDirectory scratch;
  LauncherResult result = runLauncher(LauncherInput{
      {"-n", "3", "sh", "-c", "cat > \"$0/stdin.$SLIMECCL_RANK\"", scratch.path().string()}, {}, "hello ranks\n"});

  ASSERT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_EQ(scratch.read("stdin.0"), "hello ranks\n");
  EXPECT_EQ(scratch.read("stdin.1"), "");
  EXPECT_EQ(scratch.read("stdin.2"), "");
  EXPECT_TRUE(std::filesystem::exists(scratch.file("stdin.2")));
}

}  // namespace
}  // namespace slimeccl::launcher_test
