#include "command_line.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <system_error>

namespace slimeccl::run {
namespace {

// Thrown inside the parser only; parseCommandLine turns it into a UsageError.
struct ParseFailure {
  std::string message;
};

int parseInteger(std::string_view option, std::string_view text, int minimum) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    throw ParseFailure{std::string(option) + " expects an integer, got '" + std::string(text) + "'"};
  if (value < minimum)
    throw ParseFailure{std::string(option) + " must be at least " + std::to_string(minimum) + ", got " +
                       std::to_string(value)};
  return value;
}

// The upper bound keeps the deadline arithmetic far from overflow.
constexpr double kMaxSeconds = 1e9;

double parsePositiveSeconds(std::string_view option, std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value) || value <= 0 ||
      value > kMaxSeconds)
    throw ParseFailure{std::string(option) + " expects a positive number of seconds up to 1e9, got '" +
                       std::string(text) + "'"};
  return value;
}

// Accepts HOST:PORT and [IPV6]:PORT; the library resolves HOST later.
std::string parseMaster(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    throw ParseFailure{"--master expects HOST:PORT, got '" + std::string(text) + "'"};
  std::string_view portText = text.substr(colon + 1);
  int port = 0;
  auto [end, error] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (error != std::errc() || end != portText.data() + portText.size() || port < 1 || port > 65535)
    throw ParseFailure{"--master port must be a number from 1 to 65535, got '" + std::string(portText) + "'"};
  return std::string(text);
}

// Walks the arguments, handing out option values given either as the next
// argument or after '=' (long options) or glued on (-nN).
class ArgumentCursor {
 public:
  explicit ArgumentCursor(const std::vector<std::string>& arguments) : arguments_(arguments) {}

  bool done() const { return index_ >= arguments_.size(); }
  const std::string& current() const { return arguments_[index_]; }
  void advance() { ++index_; }

  std::vector<std::string> rest() const {
    return {arguments_.begin() + static_cast<std::ptrdiff_t>(index_), arguments_.end()};
  }

  // Returns the value of `name` if the current argument is that option.
  std::optional<std::string> takeValue(std::string_view name) {
    std::string_view argument = current();
    if (argument == name) {
      if (index_ + 1 >= arguments_.size()) throw ParseFailure{std::string(name) + " requires a value"};
      index_ += 2;
      return arguments_[index_ - 1];
    }
    bool isLong = name.starts_with("--");
    if (argument.starts_with(name) && argument.size() > name.size()) {
      std::string_view tail = argument.substr(name.size());
      if (isLong && tail.front() != '=') return std::nullopt;
      if (isLong) tail.remove_prefix(1);
      ++index_;
      return std::string(tail);
    }
    return std::nullopt;
  }

 private:
  const std::vector<std::string>& arguments_;
  size_t index_ = 0;
};

ParsedCommandLine parseOrThrow(const std::vector<std::string>& arguments) {
  LaunchOptions options;
  bool haveLocalRanks = false;
  bool haveNodeRank = false;
  ArgumentCursor cursor(arguments);

  while (!cursor.done()) {
    const std::string& argument = cursor.current();
    if (argument == "--") {
      cursor.advance();
      break;
    }
    if (argument == "-h" || argument == "--help") return HelpRequested{};
    if (argument == "--version") return VersionRequested{};
    if (argument == "--tag-output") {
      options.tagOutput = true;
      cursor.advance();
    } else if (auto value = cursor.takeValue("-n")) {
      options.localRanks = parseInteger("-n", *value, 1);
      haveLocalRanks = true;
    } else if (auto value = cursor.takeValue("--nnodes")) {
      options.nodes = parseInteger("--nnodes", *value, 1);
    } else if (auto value = cursor.takeValue("--node-rank")) {
      options.nodeRank = parseInteger("--node-rank", *value, 0);
      haveNodeRank = true;
    } else if (auto value = cursor.takeValue("--master")) {
      options.master = parseMaster(*value);
    } else if (auto value = cursor.takeValue("--timeout")) {
      options.timeoutSeconds = parsePositiveSeconds("--timeout", *value);
    } else if (auto value = cursor.takeValue("--bind")) {
      if (*value == "none")
        options.binding = Binding::None;
      else if (*value == "core")
        options.binding = Binding::Core;
      else
        throw ParseFailure{"--bind expects none or core, got '" + *value + "'"};
    } else if (argument.starts_with("-") && argument != "-") {
      throw ParseFailure{"unknown option '" + argument + "'"};
    } else {
      break;
    }
  }
  options.command = cursor.rest();

  if (!haveLocalRanks) throw ParseFailure{"-n N (ranks on this node) is required"};
  if (options.command.empty()) throw ParseFailure{"no command to launch"};
  if (options.nodeRank >= options.nodes)
    throw ParseFailure{"--node-rank " + std::to_string(options.nodeRank) + " is out of range for --nnodes " +
                       std::to_string(options.nodes)};
  if (options.nodes > 1 && !options.master) throw ParseFailure{"--nnodes greater than 1 requires --master HOST:PORT"};
  if (options.nodes > 1 && !haveNodeRank) throw ParseFailure{"--nnodes greater than 1 requires --node-rank"};
  if (options.localRanks > std::numeric_limits<int>::max() / options.nodes)
    throw ParseFailure{"-n times --nnodes is too large"};
  return options;
}

}  // namespace

ParsedCommandLine parseCommandLine(const std::vector<std::string>& arguments) {
  try {
    return parseOrThrow(arguments);
  } catch (const ParseFailure& failure) {
    return UsageError{failure.message};
  }
}

std::string usageText() {
  return R"(Usage: slimeccl-run -n N [options] [--] CMD [ARGS...]

Starts N local ranks of CMD, each with SLIMECCL_RANK, SLIMECCL_NRANKS,
SLIMECCL_LOCAL_RANK, SLIMECCL_LOCAL_NRANKS, SLIMECCL_COMM_ID and
SLIMECCL_COMM_SECRET set in its environment.

Options:
  -n N                 ranks to start on this node (at least 1)
  --nnodes M           number of nodes taking part (default 1)
  --node-rank R        index of this node, 0 to M-1; its ranks are R*N .. R*N+N-1
  --master HOST:PORT   bootstrap address hosted by global rank 0; required when M > 1
  --tag-output         prefix each line of a rank's output with "[RANK] "
  --timeout SECS       stop all ranks after SECS seconds and exit with status 124
  --bind none|core     core: local rank i runs on the i-th CPU the launcher may use
                       (round robin); none: where the scheduler puts it. Default: with
                       fewer local ranks than CPUs, each on a block of CPUs of its own
                       (all shared out); else core when there are at most two local
                       ranks per CPU, else none
  -h, --help           print this help
  --version            print the version

Single node without --master: SLIMECCL_COMM_ID is 127.0.0.1 with a free port
and the secret is 128 random bits, unless SLIMECCL_COMM_ID or
SLIMECCL_COMM_SECRET are already set, in which case those values are kept.

With --master: SLIMECCL_COMM_ID is the --master value. Every node must use the
same secret: it is taken from SLIMECCL_COMM_SECRET when set, otherwise it is
derived from the --master string, and is then NOT secret (anyone who knows the
address can compute it). Set SLIMECCL_COMM_SECRET to the same random value on
all nodes to keep strangers out.

Signals INT, TERM, HUP, QUIT, USR1 and USR2 are forwarded to every rank. When a
rank fails, the others get SIGTERM, then SIGKILL 3 s later, and slimeccl-run
exits with the failed rank's status (128+signal if it was killed). Only global
rank 0 reads stdin; the other ranks get /dev/null.
)";
}

}  // namespace slimeccl::run
