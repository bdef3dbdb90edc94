#include "common/report.h"

#include "common/format.h"

namespace slimeccl_perf {

std::string formatSettings(const Options& options, std::string_view algoSetting) {
  const bool multiplicative = options.stepFactor > 1;
  std::string text = formatString(
      "# nThread %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d validation: %d\n",
      options.threads, options.minBytes, options.maxBytes, multiplicative ? options.stepFactor : options.stepBytes,
      multiplicative ? "factor" : "bytes", options.warmupIters, options.iters, options.check);
  if (options.blocking) text += "# Blocking Enabled: every call runs on the NULL stream and returns when done\n";
  if (options.sharedBuffers) text += "# Shared buffers: send and receive buffers from slimecclMemAlloc\n";
  if (options.deviceBuffers) text += "# Device buffers: send and receive buffers in GPU memory\n";
  if (!algoSetting.empty()) text += "# Algorithm: SLIMECCL_ALGO=" + std::string(algoSetting) + "\n";
  text += "#\n";
  return text;
}

std::string formatDevices(std::span<const RankDescription> ranks) {
  std::string text = "# Using devices\n";
  for (size_t i = 0; i < ranks.size(); ++i) {
    int device = 0;
    for (size_t earlier = 0; earlier < i; ++earlier) {
      if (ranks[earlier].host == ranks[i].host) ++device;
    }
    text += formatString("#  Rank %2d Group %2d Pid %6d on %10s device %2d [host] CPU\n", ranks[i].rank, 0,
                         ranks[i].pid, ranks[i].host.c_str(), device);
  }
  return text;
}

std::string formatColumnHeader() {
  return "#\n" +
         formatString("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                      "", "", "", "", "") +
         formatString("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type",
                      "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong") +
         formatString("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
                      "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

std::string formatRowStart(size_t bytes, size_t count, std::string_view typeName, std::string_view opName, int root) {
  return formatString("%12zu  %12zu  %8.*s  %6.*s  %6i", bytes, count, static_cast<int>(typeName.size()),
                      typeName.data(), static_cast<int>(opName.size()), opName.data(), root);
}

std::string formatMeasurement(const Measurement& measurement) {
  const std::string time = formatTime(measurement.seconds * 1.0e6);
  if (!measurement.wrongElements) {
    return formatString("  %7s  %6.2f  %6.2f  %5s", time.c_str(), measurement.algBw, measurement.busBw, "N/A");
  }
  return formatString("  %7s  %6.2f  %6.2f  %5g", time.c_str(), measurement.algBw, measurement.busBw,
                      static_cast<double>(*measurement.wrongElements));
}

std::string formatTime(double microseconds) {
  if (microseconds >= 10000.0) return formatString("%7.0f", microseconds);
  if (microseconds >= 100.0) return formatString("%7.1f", microseconds);
  return formatString("%7.2f", microseconds);
}

std::string formatComparisonHeader(std::span<const std::string> algorithms, int rounds) {
  std::string names;
  for (const std::string& name : algorithms) names += formatString("  %10s", name.c_str());
  return "#\n" +
         formatString("# %10s  %12s  %8s  %6s  %6s  out-of-place time (us), median of %d rounds\n", "", "", "", "", "",
                      rounds) +
         formatString("# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root") + names +
         formatString("  %6s\n", "#wrong") +
         formatString("# %10s  %12s  %8s  %6s  %6s\n", "(B)", "(elements)", "", "", "");
}

std::string formatComparisonTimes(std::span<const double> seconds, std::optional<int64_t> wrongElements) {
  std::string text;
  for (const double time : seconds) text += formatString("  %10s", formatTime(time * 1.0e6).c_str());
  if (!wrongElements) return text + formatString("  %6s\n", "N/A");
  return text + formatString("  %6g\n", static_cast<double>(*wrongElements));
}

std::string formatFooter(int64_t outOfBoundsValues, double averageBusBw) {
  return formatString("# Out of bounds values : %lld %s\n", static_cast<long long>(outOfBoundsValues),
                      outOfBoundsValues != 0 ? "FAILED" : "OK") +
         formatString("# Avg bus bandwidth    : %g\n", averageBusBw) + "#\n";
}

}  // namespace slimeccl_perf
