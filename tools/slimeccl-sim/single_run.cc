#include "tools/slimeccl-sim/single_run.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "src/base/util/strings.h"
#include "tools/slimeccl-sim/call_figures.h"
#include "tools/slimeccl-sim/data_check.h"
#include "tools/slimeccl-sim/time_format.h"

namespace slimeccl::sim {
namespace {

void printLine(const char* label, const std::string& text) { fmt::print("{:<18}{}\n", label, text); }

// Why the data of this call is not checked, or empty when it is.
std::string reasonNotToCheck(const SimCall& call) {
  if (call.nranks > kMaxCheckedRanks) {
    return fmt::format("not checked: {} ranks (the check runs up to {})", call.nranks, kMaxCheckedRanks);
  }
  const size_t bytes = dataCheckBytes(call);
  if (bytes > kMaxCheckedBytes) {
    return fmt::format("not checked: the buffers would take {} (the check allocates up to {})", humanBytes(bytes),
                       humanBytes(kMaxCheckedBytes));
  }
  return "";
}

void printSteps(const SimCall& call) {
  const TopologySummary topology = hostLayout(call.nranks, call.hosts);
  const Schedule schedule = buildCollective(scheduleRequest(call, 0, topology));
  fmt::print("\nrank 0's schedule ({} steps, scratch {} bytes):\n{}", schedule.steps.size(), schedule.scratchBytes,
             describeSchedule(schedule));
}

}  // namespace

int runSingle(const Options& options) {
  const SimCall& call = options.call;
  const std::string skipCheck = reasonNotToCheck(call);
  std::vector<Schedule> schedules;
  const CallFigures figures = measureCall(call, options.cost, skipCheck.empty() ? &schedules : nullptr);

  printLine("call", describeCall(call) + (options.algoChosenByTuner ? " (the tuner's choice)" : ""));
  if (!figures.ok) {
    printLine("schedules", "cannot run: " + figures.error);
    std::fflush(stdout);
    return 1;
  }
  printLine("sends per rank", fmt::format("max {}, min {}", figures.maxSends, figures.minSends));
  printLine("bytes per rank", fmt::format("max {}, min {}", figures.maxBytesSent, figures.minBytesSent));
  printLine("messages",
            fmt::format("{}, {} bytes in all, {} steps in all", figures.messages, figures.bytesSent, figures.steps));
  printLine("alpha-beta time", fmt::format("{} (alpha {} us, {} GB/s)", formatMicroseconds(figures.microseconds),
                                           options.cost.alphaMicroseconds, options.cost.gigabytesPerSecond));
  bool dataRight = true;
  if (!skipCheck.empty()) {
    printLine("data", skipCheck);
  } else {
    const DataCheck check = checkData(call, schedules);
    dataRight = check.simulation.ok && check.wrongElements == 0;
    if (!check.simulation.ok) {
      printLine("data", "simulation stopped: " + check.simulation.error);
    } else {
      printLine("data", fmt::format("checked on real buffers: {} wrong elements{}", check.wrongElements,
                                    check.wrongElements == 0 ? "" : ", the first at " + check.firstWrong));
    }
  }
  if (options.printSteps) printSteps(call);
  std::fflush(stdout);
  return dataRight ? 0 : 1;
}

}  // namespace slimeccl::sim
