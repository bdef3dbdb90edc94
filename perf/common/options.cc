#include "common/options.h"

#include <array>
#include <charconv>
#include <limits>
#include <optional>

#include "common/datatypes.h"
#include "common/format.h"
#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

constexpr char kLongOnly = '\0';

struct Flag {
  char shortName;  // kLongOnly: none (the letter is nccl-tests', with another meaning)
  std::string_view longName;
  bool takesValue;
};

constexpr std::array<Flag, 20> kFlags{{
    {'t', "nthreads", true},   {'b', "minbytes", true}, {'e', "maxbytes", true},       {'i', "stepbytes", true},
    {'f', "stepfactor", true}, {'n', "iters", true},    {'w', "warmup_iters", true},   {'c', "check", true},
    {'o', "op", true},         {'d', "datatype", true}, {'r', "root", true},           {'z', "blocking", true},
    {'a', "average", true},    {'A', "algo", true},     {'R', "shared_buffers", true}, {'D', "device_buffers", true},
    {'K', "rounds", true},     {'g', "ngpus", true},    {'h', "help", false},          {kLongOnly, "version", false},
}};

const Flag* findShort(char name) {
  for (const Flag& flag : kFlags) {
    if (flag.shortName == name) return &flag;
  }
  return nullptr;
}

const Flag* findLong(std::string_view name) {
  for (const Flag& flag : kFlags) {
    if (flag.longName == name) return &flag;
  }
  return nullptr;
}

std::string flagLabel(const Flag& flag) {
  if (flag.shortName == kLongOnly) return "--" + std::string(flag.longName);
  return "-" + std::string(1, flag.shortName) + "/--" + std::string(flag.longName);
}

int parseInt(const Flag& flag, std::string_view text, int min, int max = std::numeric_limits<int>::max()) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw UsageError("invalid value '" + std::string(text) + "' for " + flagLabel(flag) + ": expected an integer");
  }
  if (value < min || value > max) {
    throw UsageError(
        formatString("invalid value %d for %s: expected %d..%d", value, flagLabel(flag).c_str(), min, max));
  }
  return value;
}

void applyFlag(Options& options, const Flag& flag, std::string_view value) {
  switch (flag.shortName) {
    case 't': options.threads = parseInt(flag, value, 1); break;
    case 'b': options.minBytes = parseSize(value); break;
    case 'e': options.maxBytes = parseSize(value); break;
    case 'i': options.stepBytes = parseSize(value); break;
    case 'f': options.stepFactor = static_cast<size_t>(parseInt(flag, value, 1)); break;
    case 'n': options.iters = parseInt(flag, value, 1); break;
    case 'w': options.warmupIters = parseInt(flag, value, 0); break;
    case 'c': options.check = parseInt(flag, value, 0, 1); break;
    case 'o': options.redOps = parseRedOps(value); break;
    case 'd': options.dataTypes = parseDataTypes(value); break;
    case 'r': options.root = parseInt(flag, value, -1); break;
    case 'z': options.blocking = parseInt(flag, value, 0, 1) == 1; break;
    case 'a': options.average = static_cast<TimeAverage>(parseInt(flag, value, 0, 3)); break;
    case 'A':
      if (value.empty()) throw UsageError("-A/--algo needs an algorithm name");
      options.algo = value;
      break;
    case 'R': options.sharedBuffers = parseInt(flag, value, 0, 1) == 1; break;
    case 'D': options.deviceBuffers = parseInt(flag, value, 0, 1) == 1; break;
    case 'K': options.rounds = parseInt(flag, value, 1); break;
    // nccl-tests' GPUs per process: one rank thread per GPU.
    case 'g': options.threads = parseInt(flag, value, 1); break;
    case 'h': options.help = true; break;
    case kLongOnly: options.version = true; break;
  }
}

void validate(const Options& options) {
  for (const std::string& name : algoList(options.algo)) {
    if (name.empty()) throw UsageError("-A/--algo '" + options.algo + "' has an empty algorithm name");
  }
  if (options.maxBytes < options.minBytes) throw UsageError("invalid option: maxbytes < minbytes");
  if (options.sharedBuffers && options.deviceBuffers)
    throw UsageError(
        "invalid option: -R 1 (host buffers from slimecclMemAlloc) and -D 1 (GPU buffers) exclude each other");
  if (options.stepFactor <= 1 && options.stepBytes == 0 && options.maxBytes > options.minBytes) {
    throw UsageError("invalid option: stepbytes must be positive when no step factor above 1 is given");
  }
}

}  // namespace

size_t parseSize(std::string_view text) {
  size_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [suffix, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || suffix == begin) throw UsageError("invalid size '" + std::string(text) + "'");
  size_t unit = 1;
  if (suffix != end) {
    if (suffix + 1 != end) throw UsageError("invalid size '" + std::string(text) + "'");
    switch (*suffix) {
      case 'K':
      case 'k': unit = size_t{1} << 10; break;
      case 'M':
      case 'm': unit = size_t{1} << 20; break;
      case 'G':
      case 'g': unit = size_t{1} << 30; break;
      default: throw UsageError("invalid size '" + std::string(text) + "': suffix must be K, M or G");
    }
  }
  if (value > std::numeric_limits<size_t>::max() / unit) {
    throw UsageError("size '" + std::string(text) + "' is too large");
  }
  return value * unit;
}

Options parseOptions(std::span<const char* const> args) {
  Options options;
  for (size_t index = 0; index < args.size(); ++index) {
    const std::string_view arg = args[index];
    const Flag* flag = nullptr;
    std::optional<std::string_view> inlineValue;
    if (arg.starts_with("--")) {
      const std::string_view body = arg.substr(2);
      const size_t equals = body.find('=');
      flag = findLong(body.substr(0, equals));
      if (equals != std::string_view::npos) inlineValue = body.substr(equals + 1);
    } else if (arg.size() >= 2 && arg[0] == '-') {
      flag = findShort(arg[1]);
      if (arg.size() > 2) inlineValue = arg.substr(2);
    }
    if (flag == nullptr) throw UsageError("unknown option '" + std::string(arg) + "'");
    if (!flag->takesValue) {
      if (inlineValue) throw UsageError(flagLabel(*flag) + " takes no value");
      applyFlag(options, *flag, {});
      continue;
    }
    if (!inlineValue) {
      if (index + 1 >= args.size()) throw UsageError(flagLabel(*flag) + " needs a value");
      inlineValue = args[++index];
    }
    applyFlag(options, *flag, *inlineValue);
  }
  validate(options);
  return options;
}

std::string usageText(std::string_view program) {
  const std::string name(program);
  return "USAGE: " + name +
         "\n"
         "\t[-t,--nthreads <num threads>] ranks run as threads of each process (default 1)\n"
         "\t[-b,--minbytes <min size in bytes>] K/M/G suffixes accepted (default 32M)\n"
         "\t[-e,--maxbytes <max size in bytes>] (default 32M)\n"
         "\t[-i,--stepbytes <increment size>] used when no step factor above 1 is given (default 1M)\n"
         "\t[-f,--stepfactor <increment factor>] multiply the size by this (default 1: add stepbytes)\n"
         "\t[-n,--iters <iteration count>] (default 20)\n"
         "\t[-w,--warmup_iters <warmup iteration count>] (default 5)\n"
         "\t[-c,--check <0/1>] check the results (default 1)\n"
         "\t[-o,--op <sum/prod/min/max/avg/all>] for reduction collectives (default sum)\n"
         "\t[-d,--datatype <int8/uint8/int32/uint32/int64/uint64/half/float/double/bfloat16/all>] (default float)\n"
         "\t[-r,--root <root>] for rooted collectives, -1 for every rank (default 0)\n"
         "\t[-z,--blocking <0/1>] 1: NULL stream, each call returns when done; 0: a slimeccl stream (default 0)\n"
         "\t[-a,--average <0/1/2/3>] report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX> (default 1)\n"
         "\t[-A,--algo <algorithm>] sets SLIMECCL_ALGO=<collective>:<algorithm> before init; a list\n"
         "\t\t(ring,hd,default) times each algorithm in turn on one communicator each, 'default' the tuner's\n"
         "\t[-K,--rounds <n>] with an -A list: rounds of taking turns, each size reports the median (default 5)\n"
         "\t[-R,--shared_buffers <0/1>] 1: send and receive buffers from slimecclMemAlloc (default 0)\n"
         "\t[-D,--device_buffers <0/1>] 1: send and receive buffers in GPU memory (rank mod GPUs), and with\n"
         "\t\t-z 0 a CUDA stream that slimecclStreamCreateFromCuda orders the ops in (default 0)\n"
         "\t[-g,--ngpus <n>] GPUs per process, as nccl-tests' -g: n rank threads, each on its own GPU with -D 1\n"
         "\t[-h,--help]\n"
         "\t[--version]\n"
         "\n"
         "Several processes: start them with slimeccl-run (or mpirun/srun with SLIMECCL_COMM_ID=host:port set);\n"
         "ranks = processes x threads, rank = process rank x threads + thread.\n";
}

std::vector<std::string> algoList(std::string_view algo) {
  std::vector<std::string> names;
  if (algo.empty()) return names;
  // "allgather:ring,broadcast:tree" is one SLIMECCL_ALGO setting, not a list to compare.
  if (algo.find(':') != std::string_view::npos) return {std::string(algo)};
  size_t start = 0;
  while (true) {
    const size_t comma = algo.find(',', start);
    names.emplace_back(algo.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return names;
    start = comma + 1;
  }
}

std::string algoEnvValue(std::string_view collective, std::string_view algo) {
  if (algo.find(':') != std::string_view::npos) return std::string(algo);
  return std::string(collective) + ":" + std::string(algo);
}

}  // namespace slimeccl_perf
