#include "tools/slimeccl-sim/sweep.h"

#include <fmt/format.h>

#include <cstdio>

#include "algorithms/tuner.h"
#include "src/base/util/strings.h"
#include "tools/slimeccl-sim/call_figures.h"
#include "tools/slimeccl-sim/time_format.h"

namespace slimeccl::sim {
namespace {

constexpr Coll kCollectives[] = {Coll::AllGather, Coll::AllReduce};
constexpr size_t kSizes[] = {8, size_t{64} << 10, size_t{1} << 20, size_t{64} << 20};
constexpr int kFewestRanks = 2;

// "7 | 7.0 KiB | 47.0 us", or why the schedules cannot run.
std::string describeFigures(const CallFigures& figures) {
  if (!figures.ok) return fmt::format("cannot run: {} | | ", figures.error);
  return fmt::format("{} | {} | {}", figures.maxSends, humanBytes(figures.maxBytesSent),
                     formatMicroseconds(figures.microseconds));
}

}  // namespace

int runSweep(const CostModel& cost) {
  int status = 0;
  fmt::print(
      "Per rank: the most sends (rounds) and bytes sent by any rank; time: alpha-beta along the critical path\n"
      "(alpha {} us, {} GB/s), float elements.\n",
      cost.alphaMicroseconds, cost.gigabytesPerSecond);
  for (const Coll coll : kCollectives) {
    for (const size_t bytes : kSizes) {
      fmt::print("\n{} of {} {}\n\n", collKey(coll), humanBytes(bytes),
                 coll == Coll::AllGather ? "per rank" : "(the vector)");
      fmt::print(
          "| ranks | ring sends | ring bytes | ring time | hd sends | hd bytes | hd time | hd / ring time |\n"
          "|------:|-----------:|-----------:|----------:|---------:|---------:|--------:|---------------:|\n");
      for (int nranks = kFewestRanks; nranks <= kMaxSweepRanks; nranks *= 2) {
        SimCall call{.coll = coll, .nranks = nranks, .count = bytes / typeSize(slimecclFloat32)};
        call.algo = Algo::Ring;
        const CallFigures ring = measureCall(call, cost, nullptr);
        call.algo = Algo::HalvingDoubling;
        const CallFigures hd = measureCall(call, cost, nullptr);
        const std::string ratio =
            ring.ok && hd.ok && ring.microseconds > 0 ? fmt::format("{:.3f}", hd.microseconds / ring.microseconds) : "";
        fmt::print("| {} | {} | {} | {} |\n", nranks, describeFigures(ring), describeFigures(hd), ratio);
        std::fflush(stdout);
        if (!ring.ok || !hd.ok) status = 1;
      }
    }
  }
  return status;
}

}  // namespace slimeccl::sim
