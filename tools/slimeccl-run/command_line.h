// Parsing of the slimeccl-run command line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace slimeccl::run {

// Where the local ranks run. Automatic: with fewer ranks than CPUs, each rank on a block of its own
// (all CPUs shared out); else round robin over the CPUs when there are at most kAutomaticRanksPerCpu
// ranks per CPU (two unbound ranks that the scheduler puts on one CPU while
// another idles wait for each other's time slice; two bound ones per CPU hand it over by yielding),
// else wherever the scheduler likes.
enum class Binding { Automatic, None, Core };
// Measured with allgather_perf on 2 CPUs: 4 ranks bound two per CPU ran 8 B to 128 MiB 5 to 25%
// faster than unbound in three runs out of three; 8 ranks, four per CPU, were mixed.
constexpr size_t kAutomaticRanksPerCpu = 2;

struct LaunchOptions {
  int localRanks = 0;                 // -n: ranks started on this node
  int nodes = 1;                      // --nnodes
  int nodeRank = 0;                   // --node-rank
  std::optional<std::string> master;  // --master HOST:PORT
  bool tagOutput = false;
  std::optional<double> timeoutSeconds;
  Binding binding = Binding::Automatic;  // --bind
  std::vector<std::string> command;      // CMD ARGS...

  int totalRanks() const { return localRanks * nodes; }
  int globalRank(int localRank) const { return nodeRank * localRanks + localRank; }
};

struct HelpRequested {};
struct VersionRequested {};

struct UsageError {
  std::string message;
};

using ParsedCommandLine = std::variant<LaunchOptions, HelpRequested, VersionRequested, UsageError>;

// Parses argv[1..]. Options end at "--" or at the first argument that is not
// an option; everything from there on is the command to launch.
ParsedCommandLine parseCommandLine(const std::vector<std::string>& arguments);

std::string usageText();

}  // namespace slimeccl::run
