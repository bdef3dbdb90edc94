// The text the tools print, with nccl-tests' layout: settings header, "Using devices" block, the
// two-row column header, one row per size (out-of-place then in-place) and the footer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/options.h"

namespace slimeccl_perf {

struct RankDescription {
  int rank = 0;
  int pid = 0;
  std::string host;
};

struct Measurement {
  double seconds = 0.0;                  // one iteration, combined across ranks
  double algBw = 0.0;                    // GB/s
  double busBw = 0.0;                    // GB/s
  std::optional<int64_t> wrongElements;  // summed across ranks; empty when not checked
};

// "# nThread ..." line, notes for -z 1 and -A, then "#". algoSetting is the SLIMECCL_ALGO value -A set.
std::string formatSettings(const Options& options, std::string_view algoSetting);
// "# Using devices" and one line per rank; device is the rank's index among the ranks of its host.
std::string formatDevices(std::span<const RankDescription> ranks);
std::string formatColumnHeader();
// Size, count, type, redop and root columns; root -1 means the collective has none.
std::string formatRowStart(size_t bytes, size_t count, std::string_view typeName, std::string_view opName, int root);
// Time, algbw, busbw and #wrong columns for one placement.
std::string formatMeasurement(const Measurement& measurement);
// Microseconds with nccl-tests' precision: fewer decimals as the time grows.
std::string formatTime(double microseconds);
// With an -A list: the header naming one time column per algorithm, then each row's times (us)
// and the wrong elements summed over all of them.
std::string formatComparisonHeader(std::span<const std::string> algorithms, int rounds);
std::string formatComparisonTimes(std::span<const double> seconds, std::optional<int64_t> wrongElements);
std::string formatFooter(int64_t outOfBoundsValues, double averageBusBw);

}  // namespace slimeccl_perf
