#include "baseline_driver.h"

#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <vector>

#include "common/bandwidth.h"
#include "common/options.h"
#include "common/report.h"
#include "common/sweep.h"
#include "common/usage_error.h"
#include "src/base/util/version_line.h"

namespace slimeccl_perf {
namespace {

float valueOf(int rank, size_t i) { return static_cast<float>((static_cast<size_t>(rank) * 7919 + i) % 4093); }

struct Layout {
  size_t count;  // floats each rank contributes (AllGather) or sends (Send/Recv)
  size_t rowBytes;
};

Layout layoutFor(BaselineOp op, size_t bytes, int nranks) {
  if (op == BaselineOp::AllGather) {
    size_t count = bytes / sizeof(float) / static_cast<size_t>(nranks);
    return {count, count * sizeof(float) * static_cast<size_t>(nranks)};
  }
  size_t count = bytes / sizeof(float);
  return {count, count * sizeof(float)};
}

class Runner {
 public:
  Runner(BaselineLibrary& library, BaselineOp op, const Options& options)
      : lib_(library), op_(op), options_(options), n_(library.nranks()), rank_(library.rank()) {
    size_t maxFloats = options.maxBytes / sizeof(float) + 1;
    send_.resize(maxFloats);
    recv_.resize(maxFloats + 1);
  }

  void runOnce(const Layout& l, bool inPlace) {
    float* recv = recv_.data();
    if (op_ == BaselineOp::AllGather) {
      const float* send = inPlace ? recv + static_cast<size_t>(rank_) * l.count : send_.data();
      lib_.allGather(send, recv, l.count);
    } else {
      lib_.sendRecv(inPlace ? recv : send_.data(), recv, l.count);
    }
  }

  void fill(const Layout& l, bool inPlace) {
    float* own = op_ == BaselineOp::AllGather && inPlace ? recv_.data() + static_cast<size_t>(rank_) * l.count
                 : inPlace                               ? recv_.data()
                                                         : send_.data();
    for (size_t i = 0; i < l.count; ++i) own[i] = valueOf(rank_, i);
  }

  int64_t wrong(const Layout& l) const {
    int64_t bad = 0;
    if (op_ == BaselineOp::AllGather) {
      for (int r = 0; r < n_; ++r)
        for (size_t i = 0; i < l.count; ++i) bad += recv_[static_cast<size_t>(r) * l.count + i] != valueOf(r, i);
    } else {
      int from = (rank_ - 1 + n_) % n_;
      for (size_t i = 0; i < l.count; ++i) bad += recv_[i] != valueOf(from, i);
    }
    return bad;
  }

  Measurement measure(const Layout& l, bool inPlace) {
    Measurement m;
    // Nothing to move (a size below one element per rank); Gloo divides by the count.
    if (l.count == 0) {
      if (options_.check) m.wrongElements = 0;
      return m;
    }
    if (options_.check) {
      fill(l, inPlace);
      lib_.barrier();
      runOnce(l, inPlace);
      m.wrongElements = static_cast<int64_t>(lib_.sum(static_cast<double>(wrong(l))));
    }
    lib_.barrier();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options_.iters; ++i) runOnce(l, inPlace);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / options_.iters;
    m.seconds = lib_.sum(seconds) / n_;
    m.algBw = algBandwidthGBs(l.rowBytes, m.seconds);
    m.busBw = m.algBw * (op_ == BaselineOp::AllGather ? allGatherBusBwFactor(n_) : sendRecvBusBwFactor(n_));
    return m;
  }

  void warmUp(size_t bytes) {
    Layout l = layoutFor(op_, bytes, n_);
    if (l.count == 0) return;
    for (int i = 0; i < options_.warmupIters; ++i) runOnce(l, false);
  }

  int run() {
    if (rank_ == 0) {
      std::vector<RankDescription> ranks;
      for (int r = 0; r < n_; ++r) ranks.push_back({r, 0, lib_.host()});
      std::fputs((formatSettings(options_, "") + formatDevices(ranks) + formatColumnHeader()).c_str(), stdout);
    }
    warmUp(options_.maxBytes);
    warmUp(options_.minBytes);
    double busSum = 0;
    int rows = 0;
    int64_t wrongTotal = 0;
    for (size_t bytes : sizeSweep(options_.minBytes, options_.maxBytes, options_.stepFactor, options_.stepBytes)) {
      Layout l = layoutFor(op_, bytes, n_);
      Measurement outOfPlace = measure(l, false), inPlace = measure(l, true);
      wrongTotal += outOfPlace.wrongElements.value_or(0) + inPlace.wrongElements.value_or(0);
      busSum += outOfPlace.busBw;
      ++rows;
      if (rank_ == 0) {
        std::string row = formatRowStart(l.rowBytes, l.count, "float", "none", -1) + formatMeasurement(outOfPlace) +
                          formatMeasurement(inPlace) + "\n";
        std::fputs(row.c_str(), stdout);
        std::fflush(stdout);
      }
    }
    if (rank_ == 0) std::fputs(formatFooter(0, rows ? busSum / rows : 0.0).c_str(), stdout);
    return wrongTotal == 0 ? 0 : 1;
  }

 private:
  BaselineLibrary& lib_;
  BaselineOp op_;
  Options options_;
  int n_, rank_;
  std::vector<float> send_, recv_;
};

}  // namespace

int runBaseline(const BaselineLibraryMaker& makeLibrary, int rank, BaselineOp op, int argc, char** argv) {
  Options options;
  try {
    options = parseOptions(std::span<const char* const>(argv + 1, static_cast<size_t>(argc - 1)));
    if (options.threads != 1 || !options.algo.empty() || options.dataTypes.size() != 1 ||
        options.dataTypes[0] != slimecclFloat)
      throw UsageError("baseline tools take float data, one thread per rank and no -A");
  } catch (const UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  if (options.help) {
    if (rank == 0) std::fputs(usageText(argv[0]).c_str(), stdout);
    return 0;
  }
  if (options.version) {
    if (rank == 0) std::fputs(slimeccl::versionLine(basename(argv[0])).c_str(), stdout);
    return 0;
  }
  const std::unique_ptr<BaselineLibrary> library = makeLibrary();
  return Runner(*library, op, options).run();
}

}  // namespace slimeccl_perf
