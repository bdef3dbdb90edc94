// Parsing of the slimeccl-run command line.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace slimeccl::run {

// Where the local ranks run. Automatic: each on a CPU of its own when there are at least as many
// CPUs as ranks (two ranks that the scheduler puts on one CPU wait for each other's time slice),
// else wherever the scheduler likes.
enum class Binding { Automatic, None, Core };

struct LaunchOptions {
  int local_ranks = 0;  // -n: ranks started on this node
  int nodes = 1;        // --nnodes
  int node_rank = 0;    // --node-rank
  std::optional<std::string> master;  // --master HOST:PORT
  bool tag_output = false;
  std::optional<double> timeout_seconds;
  Binding binding = Binding::Automatic;  // --bind
  std::vector<std::string> command;  // CMD ARGS...

  int totalRanks() const { return local_ranks * nodes; }
  int globalRank(int local_rank) const { return node_rank * local_ranks + local_rank; }
};

struct HelpRequested {};

struct UsageError {
  std::string message;
};

using ParsedCommandLine = std::variant<LaunchOptions, HelpRequested, UsageError>;

// Parses argv[1..]. Options end at "--" or at the first argument that is not
// an option; everything from there on is the command to launch.
ParsedCommandLine parseCommandLine(const std::vector<std::string>& arguments);

std::string usageText();

}  // namespace slimeccl::run
