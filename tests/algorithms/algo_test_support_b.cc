#include "tests/algorithms/algo_test_support_b.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>

#include "src/op.h"

namespace slimeccl::reductiontest {
namespace {

bool isUnsigned(slimecclDataType_t type) {
  return type == slimecclUint8 || type == slimecclUint32 || type == slimecclUint64;
}

template <typename T>
std::vector<char> bytesOfValue(T value) {
  std::vector<char> out(sizeof(T));
  memcpy(out.data(), &value, sizeof(T));
  return out;
}

// Nearest pattern of a 16-bit float format to `value`; patterns 0 .. maxFinite are the finite
// non-negative values in increasing order, maxFinite + 1 is infinity, and `overflow` is where
// the next finite value would be if the format had one (the midpoint to it rounds to infinity).
uint16_t nearestPattern(double value, double (*decode)(uint16_t), uint16_t maxFinite, double overflow,
                        uint16_t quietNan) {
  if (std::isnan(value)) return quietNan;
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(value);
  if (magnitude >= overflow) return sign | static_cast<uint16_t>(maxFinite + 1);
  uint16_t lo = 0, hi = maxFinite;  // the largest pattern whose value is <= magnitude
  while (lo < hi) {
    uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (decode(mid) <= magnitude)
      lo = mid;
    else
      hi = static_cast<uint16_t>(mid - 1);
  }
  const double below = decode(lo);
  const double above = lo == maxFinite ? overflow : decode(static_cast<uint16_t>(lo + 1));
  const double toBelow = magnitude - below, toAbove = above - magnitude;
  const bool up = toAbove < toBelow || (toAbove == toBelow && (lo & 1));
  return sign | static_cast<uint16_t>(lo + (up ? 1 : 0));
}

template <typename T>
std::vector<char> integerResult(slimecclRedOp_t op, const std::vector<int64_t>& values) {
  T result{};
  if (op == slimecclSum || op == slimecclAvg) {
    uint64_t sum = 0;
    for (int64_t v : values) sum += static_cast<uint64_t>(v);
    result = static_cast<T>(sum);
    if (op == slimecclAvg) {
      using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      result = static_cast<T>(static_cast<Wide>(result) / static_cast<Wide>(values.size()));
    }
  } else if (op == slimecclProd) {
    uint64_t product = 1;
    for (int64_t v : values) product *= static_cast<uint64_t>(v);
    result = static_cast<T>(product);
  } else {
    result = static_cast<T>(values[0]);
    for (int64_t v : values) {
      T t = static_cast<T>(v);
      result = op == slimecclMax ? std::max(result, t) : std::min(result, t);
    }
  }
  return bytesOfValue(result);
}

// ---- schedule rules ----

bool isLocal(StepKind kind) { return kind == StepKind::Copy || kind == StepKind::Reduce || kind == StepKind::Scale; }
size_t stepBytes(const Step& step) { return step.kind == StepKind::Send ? step.src.bytes : step.dst.bytes; }

std::string describeStep(const Schedule& schedule, int index) {
  std::string text = describeSchedule(Schedule{{schedule.steps[index]}, 0});
  text = text.substr(text.find(": ") + 2);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return fmt::format("step {} ({})", index, text);
}

// Whether some chunk size gives two transfers of these sizes the same number (2 or more) of
// chunks; only then does the executor order them chunk by chunk rather than as a whole.
bool mayShareChunking(size_t a, size_t b) {
  const size_t small = std::min(a, b), big = std::max(a, b);
  if (small == big) return true;
  if (big >= 2 * small) return false;
  auto ceilDiv = [](size_t x, size_t y) { return (x + y - 1) / y; };
  for (size_t k = 2; k <= small; ++k)
    if (ceilDiv(big, k) < ceilDiv(small, k - 1)) return true;
  return false;
}

class StepSet {
 public:
  explicit StepSet(size_t n = 0) : words_((n + 63) / 64, 0) {}
  void add(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void remove(size_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  bool has(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void addAll(const StepSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  void removeAll(const StepSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= ~other.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

// Where the bytes of a range really are, with the in-place alias of catalog.h folded in.
struct Placement {
  BufferId buffer;
  size_t begin, end;
};

struct Access {
  int step;
  Placement at;
  bool writes;
};

class DependencyCheck {
 public:
  DependencyCheck(const ReductionCall& call, int rank, const Schedule& schedule)
      : call_(call), rank_(rank), schedule_(schedule), n_(schedule.steps.size()), full_(n_, StepSet(n_)),
        chunked_(n_, StepSet(n_)) {}

  std::string run() {
    std::string breach = checkSteps();
    if (breach.empty()) breach = checkOrder();
    return breach.empty() ? "" : fmt::format("rank {}: {}", rank_, breach);
  }

 private:
  bool inPlace() const { return call_.inPlace && (call_.coll != Coll::Reduce || rank_ == call_.root); }

  Placement place(const BufferRange& range) const {
    Placement p{range.buffer, range.offset, range.offset + range.bytes};
    if (!inPlace()) return p;
    if (call_.coll == Coll::ReduceScatter && range.buffer == BufferId::Recv) {
      const size_t shift = static_cast<size_t>(rank_) * call_.count * bytesOf(call_.type);
      return Placement{BufferId::Send, p.begin + shift, p.end + shift};
    }
    if (call_.coll != Coll::ReduceScatter && range.buffer == BufferId::Send) p.buffer = BufferId::Recv;
    return p;
  }

  // Input sits in send, and in recv in place; scratch and an out-of-place recv start undefined.
  bool holdsInputAtStart(BufferId buffer) const {
    return buffer == BufferId::Send || (buffer == BufferId::Recv && inPlace());
  }

  std::string checkSteps() const {
    for (size_t i = 0; i < n_; ++i) {
      const Step& st = schedule_.steps[i];
      const std::string where = describeStep(schedule_, static_cast<int>(i));
      if (stepBytes(st) == 0) return where + " moves zero bytes";
      if (st.dependsOn < -1 || st.dependsOn >= static_cast<int>(i)) return where + " depends on a step not before it";
      if (!isLocal(st.kind) && (st.peer < 0 || st.peer >= call_.nranks || st.peer == rank_))
        return where + " has no valid peer";
      const bool twoOperands =
          st.kind == StepKind::RecvReduce || st.kind == StepKind::Reduce || st.kind == StepKind::Copy;
      if (twoOperands && st.src.bytes != st.dst.bytes) return where + " has operands of different sizes";
      if (st.kind == StepKind::RecvReduce || st.kind == StepKind::Reduce) {
        Placement a = place(st.src), b = place(st.dst);
        bool overlapping = a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
        if (overlapping && a.begin != b.begin) return where + " reduces between partly overlapping ranges";
      }
    }
    return "";
  }

  std::vector<Access> accessesOf(int i) const {
    const Step& st = schedule_.steps[i];
    switch (st.kind) {
      case StepKind::Send: return {{i, place(st.src), false}};
      case StepKind::Recv: return {{i, place(st.dst), true}};
      case StepKind::Scale: return {{i, place(st.dst), false}, {i, place(st.dst), true}};
      case StepKind::Reduce: return {{i, place(st.src), false}, {i, place(st.dst), false}, {i, place(st.dst), true}};
      default: return {{i, place(st.src), false}, {i, place(st.dst), true}};  // RecvReduce, Copy
    }
  }

  // full_[j]: steps complete before step j starts. chunked_[j]: steps whose chunk c completes
  // before chunk c of step j starts (a chain of transfers that may share their chunking).
  void computeOrder() {
    int previousLocal = -1;
    for (size_t j = 0; j < n_; ++j) {
      const Step& st = schedule_.steps[j];
      const int d = st.dependsOn;
      if (d >= 0) {
        const Step& dep = schedule_.steps[d];
        const bool wholeStep =
            isLocal(st.kind) || isLocal(dep.kind) || !mayShareChunking(stepBytes(st), stepBytes(dep));
        full_[j].addAll(full_[d]);
        if (wholeStep) {
          full_[j].addAll(chunked_[d]);
          full_[j].add(d);
        } else {
          chunked_[j].addAll(chunked_[d]);
          chunked_[j].add(d);
        }
      }
      if (isLocal(st.kind)) {
        if (previousLocal >= 0) {
          full_[j].addAll(full_[previousLocal]);
          full_[j].addAll(chunked_[previousLocal]);
          full_[j].add(previousLocal);
        }
        previousLocal = static_cast<int>(j);
      }
      chunked_[j].removeAll(full_[j]);
    }
  }

  // Whether `earlier` is done with the bytes `later` touches before `later` touches them.
  bool ordered(const Access& earlier, const Access& later) const {
    if (full_[later.step].has(earlier.step)) return true;
    if (!chunked_[later.step].has(earlier.step)) return false;
    // A chain of transfers is ordered chunk by chunk only if one chunk size gives all of them the
    // same chunk count; else some link of it orders whole steps.
    size_t smallest = SIZE_MAX, largest = 0;
    for (int s = later.step;; s = schedule_.steps[s].dependsOn) {
      smallest = std::min(smallest, stepBytes(schedule_.steps[s]));
      largest = std::max(largest, stepBytes(schedule_.steps[s]));
      if (s == earlier.step) break;
    }
    if (!mayShareChunking(smallest, largest)) return true;
    // Chunk by chunk: a byte must not sit in a later chunk of `earlier` than of `later`.
    return later.at.begin <= earlier.at.begin;
  }

  std::string checkOrder() {
    computeOrder();
    std::map<BufferId, std::vector<Access>> byBuffer;
    for (size_t i = 0; i < n_; ++i)
      for (const Access& a : accessesOf(static_cast<int>(i))) byBuffer[a.at.buffer].push_back(a);
    for (auto& [buffer, accesses] : byBuffer) {
      // Cut the buffer into segments at every access boundary; check each segment's accessors.
      std::vector<size_t> cuts;
      for (const Access& a : accesses) {
        cuts.push_back(a.at.begin);
        cuts.push_back(a.at.end);
      }
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      std::vector<std::vector<const Access*>> segments(cuts.size());
      for (const Access& a : accesses) {
        size_t first = std::lower_bound(cuts.begin(), cuts.end(), a.at.begin) - cuts.begin();
        for (size_t k = first; k < cuts.size() && cuts[k] < a.at.end; ++k) segments[k].push_back(&a);
      }
      for (size_t k = 0; k < segments.size(); ++k) {
        std::string breach = checkSegment(buffer, cuts[k], segments[k]);
        if (!breach.empty()) return breach;
      }
    }
    return "";
  }

  std::string checkSegment(BufferId buffer, size_t at, const std::vector<const Access*>& accessors) const {
    static const char* kNames[] = {"send", "recv", "scratch"};
    const char* name = kNames[static_cast<int>(buffer)];
    for (const Access* x : accessors) {
      for (const Access* y : accessors) {
        if (x->step >= y->step || !(x->writes || y->writes)) continue;
        if (!ordered(*x, *y))
          return fmt::format("{} and {} both touch {} byte {} (one writes) but nothing orders them",
                             describeStep(schedule_, x->step), describeStep(schedule_, y->step), name, at);
      }
      if (x->writes || holdsInputAtStart(buffer)) continue;
      bool written = false;
      for (const Access* w : accessors) written |= w->writes && w->step != x->step && ordered(*w, *x);
      if (!written)
        return fmt::format("{} reads {} byte {} before any step ordered before it wrote it",
                           describeStep(schedule_, x->step), name, at);
    }
    return "";
  }

  const ReductionCall& call_;
  const int rank_;
  const Schedule& schedule_;
  const size_t n_;
  std::vector<StepSet> full_, chunked_;
};

struct RankBufferSizes {
  size_t send, recv;
};

RankBufferSizes bufferSizes(const ReductionCall& call, int rank) {
  const size_t elem = bytesOf(call.type);
  const size_t vector = call.count * elem;
  switch (call.coll) {
    case Coll::ReduceScatter: return {vector * call.nranks, vector};
    case Coll::Reduce:
      if (rank != call.root) return {vector, 0};
      return {call.inPlace ? 0 : vector, vector};
    default: return {call.inPlace ? 0 : vector, vector};  // AllReduce
  }
}

bool referencesBuffer(const Schedule& schedule, BufferId buffer) {
  for (const Step& st : schedule.steps) {
    bool src = st.kind != StepKind::Recv && st.kind != StepKind::Scale && st.src.buffer == buffer;
    bool dst = st.kind != StepKind::Send && st.dst.buffer == buffer;
    if (src || dst) return true;
  }
  return false;
}

}  // namespace

std::vector<int> largeRankCounts() { return {100, 127, 128, 255, 256, 1024}; }

std::vector<slimecclDataType_t> allTypes() {
  return {slimecclInt8,   slimecclUint8,   slimecclInt32,   slimecclUint32,  slimecclInt64,
          slimecclUint64, slimecclFloat16, slimecclFloat32, slimecclFloat64, slimecclBfloat16};
}

std::vector<slimecclRedOp_t> allOps() { return {slimecclSum, slimecclProd, slimecclMax, slimecclMin, slimecclAvg}; }

size_t bytesOf(slimecclDataType_t type) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return kSizes[type];
}

double halfValue(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f)
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

double bfloat16Value(uint16_t bits) {
  // bfloat16 is by definition the upper half of a float32.
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  memcpy(&f, &wide, sizeof(f));
  return f;
}

uint16_t nearestHalf(double value) { return nearestPattern(value, halfValue, 0x7bff, 65536.0, 0x7e00); }
uint16_t nearestBfloat16(double value) {
  return nearestPattern(value, bfloat16Value, 0x7f7f, std::ldexp(1.0, 128), 0x7fc0);
}

std::vector<char> encode(slimecclDataType_t type, double value) {
  switch (type) {
    case slimecclInt8: return bytesOfValue(static_cast<int8_t>(static_cast<int64_t>(value)));
    case slimecclUint8: return bytesOfValue(static_cast<uint8_t>(static_cast<int64_t>(value)));
    case slimecclInt32: return bytesOfValue(static_cast<int32_t>(static_cast<int64_t>(value)));
    case slimecclUint32: return bytesOfValue(static_cast<uint32_t>(static_cast<int64_t>(value)));
    case slimecclInt64: return bytesOfValue(static_cast<int64_t>(value));
    case slimecclUint64: return bytesOfValue(static_cast<uint64_t>(static_cast<int64_t>(value)));
    case slimecclFloat16: return bytesOfValue(nearestHalf(value));
    case slimecclFloat32: return bytesOfValue(static_cast<float>(value));
    case slimecclFloat64: return bytesOfValue(value);
    case slimecclBfloat16: return bytesOfValue(nearestBfloat16(value));
    default: return {};
  }
}

std::string show(slimecclDataType_t type, const char* element) {
  auto get = [&](auto zero) {
    decltype(zero) v;
    memcpy(&v, element, sizeof(v));
    return v;
  };
  switch (type) {
    case slimecclInt8: return std::to_string(get(int8_t{}));
    case slimecclUint8: return std::to_string(get(uint8_t{}));
    case slimecclInt32: return std::to_string(get(int32_t{}));
    case slimecclUint32: return std::to_string(get(uint32_t{}));
    case slimecclInt64: return std::to_string(get(int64_t{}));
    case slimecclUint64: return std::to_string(get(uint64_t{}));
    case slimecclFloat16: return fmt::format("{} (0x{:04x})", halfValue(get(uint16_t{})), get(uint16_t{}));
    case slimecclFloat32: return fmt::format("{}", get(float{}));
    case slimecclFloat64: return fmt::format("{}", get(double{}));
    case slimecclBfloat16: return fmt::format("{} (0x{:04x})", bfloat16Value(get(uint16_t{})), get(uint16_t{}));
    default: return "?";
  }
}

int64_t inputValue(slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t index) {
  const int64_t i = static_cast<int64_t>(index);
  switch (op) {
    case slimecclSum:
    case slimecclAvg: {
      // At most about 64 ranks contribute to an element, each at most 3 in magnitude: every
      // partial sum is an integer of magnitude <= 192, exact even in bfloat16.
      const int64_t stride = std::max(1, nranks / 32);
      if ((rank + i) % stride != 0) return 0;
      const int64_t v = (rank * 7 + i * 3) % 7;
      return isUnsigned(type) ? v : v - 3;
    }
    case slimecclProd: {
      // Mostly 1, at most 8 twos per element, and a few -1 (3 for unsigned types, which wrap).
      if ((rank * 5 + i) % std::max(8, nranks / 4) == 0) return 2;
      if ((rank * 3 + i) % 13 == 0) return isUnsigned(type) ? 3 : -1;
      return 1;
    }
    default: {
      const int64_t v = (rank * 37 + i * 11) % 101;
      return isUnsigned(type) ? 2 * v : v - 50;
    }
  }
}

std::vector<char> expectedElement(slimecclDataType_t type, slimecclRedOp_t op, const std::vector<int64_t>& values) {
  switch (type) {
    case slimecclInt8: return integerResult<int8_t>(op, values);
    case slimecclUint8: return integerResult<uint8_t>(op, values);
    case slimecclInt32: return integerResult<int32_t>(op, values);
    case slimecclUint32: return integerResult<uint32_t>(op, values);
    case slimecclInt64: return integerResult<int64_t>(op, values);
    case slimecclUint64: return integerResult<uint64_t>(op, values);
    default: break;
  }
  // Floats: the inputs make every partial result exact, so the result is the exact one rounded.
  double exact = op == slimecclProd ? 1.0 : op == slimecclMax ? -INFINITY : op == slimecclMin ? INFINITY : 0.0;
  for (int64_t v : values) {
    const double x = static_cast<double>(v);
    if (op == slimecclSum || op == slimecclAvg)
      exact += x;
    else if (op == slimecclProd)
      exact *= x;
    else
      exact = op == slimecclMax ? std::max(exact, x) : std::min(exact, x);
  }
  if (op != slimecclAvg) return encode(type, exact);
  // avg: the stored sum divided by the rank count, in the precision the kernels use.
  const double n = static_cast<double>(values.size());
  if (type == slimecclFloat64) return bytesOfValue(exact / n);
  return encode(type, static_cast<float>(exact) / static_cast<float>(n));
}

std::string describe(const ReductionCall& call) {
  std::string text = fmt::format("{} {} nranks={} count={} {} {}", collName(call.coll), algoName(call.algo),
                                 call.nranks, call.count, typeName(call.type), redOpName(call.op));
  if (call.coll == Coll::Reduce) text += fmt::format(" root={}", call.root);
  if (call.inPlace) text += " in-place";
  return text;
}

std::string findDependencyBreach(const ReductionCall& call, int rank, const Schedule& schedule) {
  return DependencyCheck(call, rank, schedule).run();
}

std::string findPairingBreach(const std::vector<Schedule>& schedules) {
  const int n = static_cast<int>(schedules.size());
  // Per (sender, receiver): the sizes the sender sends, and the sizes the receiver expects.
  std::map<std::pair<int, int>, std::pair<std::vector<size_t>, std::vector<size_t>>> traffic;
  for (int r = 0; r < n; ++r)
    for (const Step& st : schedules[r].steps) {
      if (st.kind == StepKind::Send) traffic[{r, st.peer}].first.push_back(st.src.bytes);
      if (st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce)
        traffic[{st.peer, r}].second.push_back(st.dst.bytes);
    }
  for (const auto& [pair, sizes] : traffic)
    if (sizes.first != sizes.second)
      return fmt::format("rank {} sends {} message(s) to rank {}, which receives {}, or their sizes differ", pair.first,
                         sizes.first.size(), pair.second, sizes.second.size());
  return "";
}

::testing::AssertionResult runReduction(const ReductionCall& call, ReductionRun* run, bool checkRules) {
  const int n = call.nranks;
  const size_t elem = bytesOf(call.type);
  const size_t inputCount = call.coll == Coll::ReduceScatter ? call.count * n : call.count;
  std::vector<std::vector<int64_t>> values(n, std::vector<int64_t>(inputCount));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < inputCount; ++i) values[r][i] = inputValue(call.type, call.op, n, r, i);
  auto inputBytes = [&](int r, size_t first, size_t count) {
    std::vector<char> out;
    for (size_t i = first; i < first + count; ++i) {
      std::vector<char> e = encode(call.type, static_cast<double>(values[r][i]));
      out.insert(out.end(), e.begin(), e.end());
    }
    return out;
  };
  auto producesOutput = [&](int r) { return call.coll != Coll::Reduce || r == call.root; };
  // Output element i of rank r reduces input element firstInput + i of every rank: a block of
  // the input per rank for ReduceScatter, the same vector for every rank otherwise.
  auto reduceColumns = [&](size_t firstInput) {
    std::vector<char> out;
    std::vector<int64_t> column(n);
    for (size_t i = 0; i < call.count; ++i) {
      for (int q = 0; q < n; ++q) column[q] = values[q][firstInput + i];
      std::vector<char> e = expectedElement(call.type, call.op, column);
      out.insert(out.end(), e.begin(), e.end());
    }
    return out;
  };
  std::vector<std::vector<char>> expected(n);
  const std::vector<char> sameForAll = call.coll == Coll::ReduceScatter ? std::vector<char>{} : reduceColumns(0);
  for (int r = 0; r < n; ++r)
    if (producesOutput(r)) expected[r] = call.coll == Coll::ReduceScatter ? reduceColumns(r * call.count) : sameForAll;

  ReductionRun local;
  ReductionRun& out = run ? *run : local;
  out.schedules.clear();
  std::vector<RankBuffers> buffers(n);
  for (int r = 0; r < n; ++r) {
    const bool inPlace = call.inPlace && (call.coll != Coll::Reduce || r == call.root);
    ScheduleRequest request{call.coll, call.algo, call.count, elem, call.op, call.root, inPlace, n, r, nullptr};
    out.schedules.push_back(buildCollective(request));
    RankBufferSizes sizes = bufferSizes(call, r);
    buffers[r].send = sizes.send ? inputBytes(r, 0, inputCount) : std::vector<char>{};
    buffers[r].recv.assign(sizes.recv, 0);
    // Bytes the call must overwrite start as the complement of their expected value.
    for (size_t b = 0; b < sizes.recv && producesOutput(r); ++b)
      buffers[r].recv[b] = static_cast<char>(~expected[r][b]);
    if (inPlace) {
      const size_t first = call.coll == Coll::ReduceScatter ? r * call.count : 0;
      buffers[r].recv = inputBytes(r, first, call.count);
    }
  }
  if (checkRules) {
    for (int r = 0; r < n; ++r) {
      if (!producesOutput(r) && referencesBuffer(out.schedules[r], BufferId::Recv))
        return ::testing::AssertionFailure() << describe(call) << ": rank " << r << " is not the root but uses recv";
      std::string breach = findDependencyBreach(call, r, out.schedules[r]);
      if (!breach.empty()) return ::testing::AssertionFailure() << describe(call) << ": " << breach;
    }
    std::string breach = findPairingBreach(out.schedules);
    if (!breach.empty()) return ::testing::AssertionFailure() << describe(call) << ": " << breach;
  }
  out.simulation = simulate(out.schedules, buffers, SimulationOptions{call.type, call.op});
  if (!out.simulation.ok) return ::testing::AssertionFailure() << describe(call) << ": " << out.simulation.error;
  for (int r = 0; r < n; ++r) {
    if (!producesOutput(r)) continue;
    for (size_t i = 0; i < call.count; ++i) {
      const char* got = buffers[r].recv.data() + i * elem;
      const char* want = expected[r].data() + i * elem;
      if (memcmp(got, want, elem) != 0)
        return ::testing::AssertionFailure() << describe(call) << ": rank " << r << " element " << i << " is "
                                             << show(call.type, got) << ", expected " << show(call.type, want);
    }
  }
  return ::testing::AssertionSuccess();
}

ReductionCall withTypeOp(ReductionCall call, slimecclDataType_t type, slimecclRedOp_t op, bool inPlace) {
  call.type = type;
  call.op = op;
  call.inPlace = inPlace;
  return call;
}

ReductionCall asLargeRankCall(ReductionCall call) {
  return withTypeOp(call, call.nranks % 2 ? slimecclInt8 : slimecclUint8, slimecclAvg, call.nranks % 3 == 0);
}

::testing::AssertionResult countZeroNeedsNoSteps(Coll coll, Algo algo) {
  for (int n : {1, 2, 5, 8})
    for (int rank = 0; rank < n; ++rank) {
      const int root = coll == Coll::Reduce ? n - 1 : 0;
      ScheduleRequest request{coll, algo, 0, 4, slimecclAvg, root, false, n, rank, nullptr};
      if (!buildCollective(request).steps.empty())
        return ::testing::AssertionFailure() << "rank " << rank << " of " << n << " has steps for count 0";
    }
  return ::testing::AssertionSuccess();
}

}  // namespace slimeccl::reductiontest
