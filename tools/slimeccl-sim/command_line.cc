#include "tools/slimeccl-sim/command_line.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "algorithms/tuner.h"
#include "src/exec/mailbox.h"

namespace slimeccl::sim {
namespace {

const Coll kCollectives[] = {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce,
                             Coll::Broadcast, Coll::Reduce,        Coll::AlltoAll};

bool parseInteger(std::string_view text, long long* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool parseNumber(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// "1024", "64K", "1M", "2G": suffixes are powers of 1024.
bool parseBytes(std::string_view text, size_t* out) {
  size_t unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k': unit = size_t{1} << 10; break;
      case 'M':
      case 'm': unit = size_t{1} << 20; break;
      case 'G':
      case 'g': unit = size_t{1} << 30; break;
      default: break;
    }
  }
  if (unit != 1) text.remove_suffix(1);
  long long value = 0;
  if (!parseInteger(text, &value) || value < 0 || static_cast<size_t>(value) > SIZE_MAX / unit) return false;
  *out = static_cast<size_t>(value) * unit;
  return true;
}

bool parseColl(const std::string& name, Coll* out) {
  for (const Coll coll : kCollectives) {
    if (name == collKey(coll)) {
      *out = coll;
      return true;
    }
  }
  return false;
}

bool parseType(const std::string& name, slimecclDataType_t* out) {
  for (int type = 0; type < slimecclNumTypes; ++type) {
    if (name == typeName(static_cast<slimecclDataType_t>(type))) {
      *out = static_cast<slimecclDataType_t>(type);
      return true;
    }
  }
  return false;
}

bool parseOp(const std::string& name, slimecclRedOp_t* out) {
  for (int op = 0; op < slimecclNumOps; ++op) {
    if (name == redOpName(static_cast<slimecclRedOp_t>(op))) {
      *out = static_cast<slimecclRedOp_t>(op);
      return true;
    }
  }
  return false;
}

std::string algorithmList(Coll coll) {
  std::string names;
  for (const Algo algo : algorithmsFor(coll)) names += (names.empty() ? "" : ", ") + std::string(algoName(algo));
  return names;
}

struct RawArguments {
  std::optional<std::string> coll, algo, nranks, bytes, type, op, root, hosts, alpha, beta, predictGpus, fromBytes;
  std::vector<std::string> measured;
};

bool readArguments(int argc, char** argv, RawArguments* raw, Options* out, std::string* error) {
  for (int index = 1; index < argc; ++index) {
    std::string arg = argv[index];
    std::optional<std::string> inlineValue;
    if (const size_t equals = arg.find('='); arg.starts_with("--") && equals != std::string::npos) {
      inlineValue = arg.substr(equals + 1);
      arg.resize(equals);
    }
    if (arg == "-h" || arg == "--help" || arg == "--steps" || arg == "--sweep" || arg == "--version") {
      if (inlineValue) {
        *error = arg + " takes no value";
        return false;
      }
      if (arg == "--steps")
        out->printSteps = true;
      else if (arg == "--sweep")
        out->sweep = true;
      else if (arg == "--version")
        out->version = true;
      else
        out->help = true;
      continue;
    }
    if (arg == "--measured") {
      if (!inlineValue && index + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      raw->measured.push_back(inlineValue ? *inlineValue : argv[++index]);
      continue;
    }
    std::optional<std::string>* slot = arg == "--coll"           ? &raw->coll
                                       : arg == "--predict-gpus" ? &raw->predictGpus
                                       : arg == "--from-bytes"   ? &raw->fromBytes
                                       : arg == "--algo"         ? &raw->algo
                                       : arg == "--nranks"       ? &raw->nranks
                                       : arg == "--bytes"        ? &raw->bytes
                                       : arg == "--type"         ? &raw->type
                                       : arg == "--op"           ? &raw->op
                                       : arg == "--root"         ? &raw->root
                                       : arg == "--hosts"        ? &raw->hosts
                                       : arg == "--alpha-us"     ? &raw->alpha
                                       : arg == "--beta-gbps"    ? &raw->beta
                                                                 : nullptr;
    if (slot == nullptr) {
      *error = "unknown argument '" + arg + "'";
      return false;
    }
    if (!inlineValue) {
      if (index + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      inlineValue = argv[++index];
    }
    *slot = *inlineValue;
  }
  return true;
}

bool readCostModel(const RawArguments& raw, CostModel* cost, std::string* error) {
  if (raw.alpha && (!parseNumber(*raw.alpha, &cost->alphaMicroseconds) || cost->alphaMicroseconds < 0)) {
    *error = "--alpha-us needs a number of microseconds >= 0, not '" + *raw.alpha + "'";
    return false;
  }
  if (raw.beta && (!parseNumber(*raw.beta, &cost->gigabytesPerSecond) || cost->gigabytesPerSecond <= 0)) {
    *error = "--beta-gbps needs a bandwidth in GB/s > 0, not '" + *raw.beta + "'";
    return false;
  }
  return true;
}

bool readPrediction(const RawArguments& raw, Options* out, std::string* error) {
  long long gpus = 0;
  if (!parseInteger(*raw.predictGpus, &gpus) || gpus < 2 || gpus > 64) {
    *error = "--predict-gpus needs a GPU count 2..64, not '" + *raw.predictGpus + "'";
    return false;
  }
  if (raw.measured.empty()) {
    *error = "--predict-gpus needs at least one --measured FILE";
    return false;
  }
  if (raw.fromBytes && !parseBytes(*raw.fromBytes, &out->predictFromBytes)) {
    *error = "--from-bytes needs a size (K, M, G suffixes), not '" + *raw.fromBytes + "'";
    return false;
  }
  out->predictGpus = static_cast<int>(gpus);
  out->measured = raw.measured;
  return true;
}

bool readCall(const RawArguments& raw, Options* out, std::string* error) {
  SimCall& call = out->call;
  if (!raw.coll || !raw.nranks || !raw.bytes) {
    *error = "--coll, --nranks and --bytes are required (or --sweep)";
    return false;
  }
  if (!parseColl(*raw.coll, &call.coll)) {
    *error =
        "unknown collective '" + *raw.coll + "' (allgather, reducescatter, allreduce, broadcast, reduce, alltoall)";
    return false;
  }
  long long value = 0;
  if (!parseInteger(*raw.nranks, &value) || value < 1 || value > kMaxRanks) {
    *error = fmt::format("--nranks needs 1..{}, not '{}'", kMaxRanks, *raw.nranks);
    return false;
  }
  call.nranks = static_cast<int>(value);
  if (raw.type && !parseType(*raw.type, &call.type)) {
    *error =
        "unknown type '" + *raw.type + "' (int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16)";
    return false;
  }
  if (raw.op && !parseOp(*raw.op, &call.op)) {
    *error = "unknown op '" + *raw.op + "' (sum, prod, max, min, avg)";
    return false;
  }
  size_t bytes = 0;
  if (!parseBytes(*raw.bytes, &bytes) || bytes % typeSize(call.type) != 0) {
    *error = fmt::format("--bytes needs a whole number of {} elements (K, M, G suffixes allowed), not '{}'",
                         typeName(call.type), *raw.bytes);
    return false;
  }
  call.count = bytes / typeSize(call.type);
  if (raw.root && (!parseInteger(*raw.root, &value) || value < 0 || value >= call.nranks)) {
    *error = fmt::format("--root needs a rank 0..{}, not '{}'", call.nranks - 1, *raw.root);
    return false;
  }
  if (raw.root) call.root = static_cast<int>(value);
  if (raw.hosts && (!parseInteger(*raw.hosts, &value) || value < 1 || value > call.nranks)) {
    *error = fmt::format("--hosts needs 1..{}, not '{}'", call.nranks, *raw.hosts);
    return false;
  }
  if (raw.hosts) call.hosts = static_cast<int>(value);
  if (!raw.algo) {
    const size_t tunerBytes = opBytes(call.coll, call.count, typeSize(call.type), call.nranks);
    // One host: the ranks share slots, as a comm over shm does (up to kMailboxMaxRanks).
    TunerTopology topo{call.hosts == 1, call.hosts == 1 && call.nranks <= kMailboxMaxRanks};
    call.algo = chooseAlgorithm(call.coll, tunerBytes, call.nranks, topo, AlgoOverrides{}).algo;
    out->algoChosenByTuner = true;
    return true;
  }
  bool fits = false;
  Algo algo;
  if (parseAlgo(*raw.algo, &algo)) {
    for (const Algo offered : algorithmsFor(call.coll)) fits |= offered == algo;
  }
  if (!fits) {
    *error =
        fmt::format("{} has no algorithm '{}' (it has: {})", collKey(call.coll), *raw.algo, algorithmList(call.coll));
    return false;
  }
  call.algo = algo;
  return true;
}

}  // namespace

bool parseCommandLine(int argc, char** argv, Options* out, std::string* error) {
  RawArguments raw;
  if (!readArguments(argc, argv, &raw, out, error)) return false;
  if (out->help || out->version) return true;
  if (!readCostModel(raw, &out->cost, error)) return false;
  if (out->sweep) return true;
  if (raw.predictGpus) return readPrediction(raw, out, error);
  return readCall(raw, out, error);
}

const char* usageText() {
  return "Usage: slimeccl-sim --coll COLL [--algo ALGO] --nranks N --bytes B [options]\n"
         "       slimeccl-sim --sweep [--alpha-us A] [--beta-gbps G]\n"
         "       slimeccl-sim --predict-gpus N --measured FILE [--measured FILE ...] [--from-bytes B]\n"
         "Builds every rank's schedule of one collective call and runs them without a network:\n"
         "counts each rank's sends and bytes, computes the alpha-beta time along the critical path,\n"
         "and for up to 1024 ranks (and 1 GiB of buffers) checks the data on real buffers.\n"
         "  --coll COLL      allgather, reducescatter, allreduce, broadcast, reduce, alltoall\n"
         "  --algo ALGO      ring, hd, rd, direct, hier, tree, chain, scatter_ag, rs_gather, pairwise,\n"
         "                   bruck (those of COLL); default: the tuner's choice\n"
         "  --nranks N       1..4096\n"
         "  --bytes B        the call's count argument in bytes (K, M, G suffixes): what each rank\n"
         "                   contributes to AllGather, receives from ReduceScatter, sends to each rank\n"
         "                   in AlltoAll; the vector of AllReduce, Broadcast, Reduce\n"
         "  --type T         int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (float)\n"
         "  --op OP          sum prod max min avg, for reductions (sum)\n"
         "  --root R         root of Broadcast and Reduce (0)\n"
         "  --hosts H        ranks spread over H hosts, consecutive ranks together (1)\n"
         "  --steps          print rank 0's schedule\n"
         "  --alpha-us A     per-message cost in microseconds (5)\n"
         "  --beta-gbps G    bandwidth in GB/s, 1e9 bytes (12.5)\n"
         "  --sweep          ring vs halving-doubling for AllGather and AllReduce, 2..4096 ranks,\n"
         "                   8 B, 64 KiB, 1 MiB and 64 MiB, as markdown tables\n"
         "  --predict-gpus N the alpha-beta model fitted to measured GPU tables (perf/compare_nccl_tests.sh's\n"
         "                   output in each --measured FILE), predicting NCCL's and slimeccl's times on N\n"
         "                   GPUs for every op in them, from the table of the most GPUs measured; sizes\n"
         "                   from --from-bytes (4M) up (tools/slimeccl-sim/gpu_prediction.h)\n"
         "  -h, --help       this text\n"
         "  --version        the version\n";
}

}  // namespace slimeccl::sim
