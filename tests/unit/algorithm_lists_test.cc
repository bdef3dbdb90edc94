// The algorithms of each collective are the catalog's (algorithmsFor); four other places list
// them for readers and runners: the tables of docs/tuning.md and docs/perf-tools.md, the perf
// tools' algorithm comparisons in perf/CMakeLists.txt and the api tests' cases in
// tests/api/algorithm_case.cc. Each must list exactly the catalog's, so that none drifts.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

struct Collective {
  Coll coll;
  const char* key;       // SLIMECCL_ALGO's spelling
  const char* caseName;  // algorithm_case.cc's enumerator
};

constexpr Collective kCollectives[] = {
    {Coll::AllGather, "allgather", "kAllGather"}, {Coll::ReduceScatter, "reducescatter", "kReduceScatter"},
    {Coll::AllReduce, "allreduce", "kAllReduce"}, {Coll::Broadcast, "broadcast", "kBroadcast"},
    {Coll::Reduce, "reduce", "kReduce"},          {Coll::AlltoAll, "alltoall", "kAlltoAll"},
};

std::string sourceFile(const std::string& path) {
  std::ifstream in(std::string(SLIMECCL_SOURCE_DIR) + "/" + path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> catalogNames(Coll coll) {
  std::vector<std::string> names;
  for (Algo algo : algorithmsFor(coll)) names.push_back(algoName(algo));
  return names;
}

// The names matched by group 1 of `item` within `text`, in order.
std::vector<std::string> allMatches(const std::string& text, const std::regex& item) {
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), item); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

// The line of `text` matching `line` (group 1: the part holding the names); empty if none.
std::string lineOf(const std::string& text, const std::regex& line) {
  std::smatch m;
  return std::regex_search(text, m, line) ? std::string(m[1]) : std::string();
}

const std::regex kBackticked("`([a-z_]+)`");

TEST(AlgorithmLists, TuningDocTableListsTheCatalog) {
  const std::string doc = sourceFile("docs/tuning.md");
  for (const Collective& c : kCollectives) {
    std::string cell = lineOf(doc, std::regex(std::string("\\n\\| `") + c.key + "` \\| ([^\\n]*) \\|\\n"));
    EXPECT_EQ(allMatches(cell, kBackticked), catalogNames(c.coll)) << "docs/tuning.md, " << c.key;
  }
}

TEST(AlgorithmLists, PerfToolsDocTableListsTheCatalog) {
  const std::string doc = sourceFile("docs/perf-tools.md");
  for (const Collective& c : kCollectives) {
    std::string cell =
        lineOf(doc, std::regex(std::string("\\n\\| `") + c.key + "_perf` \\| `" + c.key + "` \\| ([^\\n]*) \\|\\n"));
    EXPECT_EQ(allMatches(cell, kBackticked), catalogNames(c.coll)) << "docs/perf-tools.md, " << c.key;
  }
}

TEST(AlgorithmLists, PerfComparisonsRunTheCatalog) {
  const std::string cmake = sourceFile("perf/CMakeLists.txt");
  for (const Collective& c : kCollectives) {
    std::string list = lineOf(cmake, std::regex(std::string("\"") + c.key + "=([a-z_,]+),default\""));
    EXPECT_EQ(allMatches(list, std::regex("([a-z_]+)")), catalogNames(c.coll)) << "perf/CMakeLists.txt, " << c.key;
  }
}

TEST(AlgorithmLists, ApiTestCasesForceTheCatalog) {
  const std::string source = sourceFile("tests/api/algorithm_case.cc");
  for (const Collective& c : kCollectives) {
    std::string list =
        lineOf(source, std::regex(std::string("case Collective::") + c.caseName + ": return \\{([^}]*)\\}"));
    EXPECT_EQ(allMatches(list, std::regex("\"([a-z_]+)\"")), catalogNames(c.coll))
        << "tests/api/algorithm_case.cc, " << c.key;
  }
}

}  // namespace
}  // namespace slimeccl
