#include "common/perf_main.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_runner.h"
#include "common/call_check.h"
#include "common/cross_rank.h"
#include "common/device_buffer.h"
#include "common/options.h"
#include "common/process_env.h"
#include "common/report.h"
#include "common/usage_error.h"
#include "src/base/util/version_line.h"

namespace slimeccl_perf {
namespace {

struct RunSetup {
  Options options;
  std::string algoSetting;                      // the SLIMECCL_ALGO value -A set, empty without -A
  std::vector<std::string> comparedAlgorithms;  // an -A list of several: one communicator each
  ProcessPlacement placement;
};

const char* environmentValue(const char* name) { return std::getenv(name); }

StreamMode streamMode(const Options& options) {
  if (options.blocking) return StreamMode::Blocking;
  return options.deviceBuffers ? StreamMode::Cuda : StreamMode::Host;
}

std::string programName(const char* argv0) {
  const std::string path = argv0 != nullptr ? argv0 : "perf";
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Everything that can be refused before any rank starts; throws UsageError.
RunSetup prepareRun(int argc, char** argv, const CollectiveTest& test, const std::string& program) {
  RunSetup setup;
  setup.options = parseOptions({argv + 1, static_cast<size_t>(argc - 1)});
  if (setup.options.help) return setup;
  const std::vector<std::string> algorithms = algoList(setup.options.algo);
  if (!algorithms.empty() && test.algoCollective().empty()) {
    throw UsageError(program + " has no algorithm to choose with -A");
  }
  if (algorithms.size() == 1) {
    setup.algoSetting = algoEnvValue(test.algoCollective(), algorithms.front());
    // Read by the library when the communicators are created.
    setenv("SLIMECCL_ALGO", setup.algoSetting.c_str(), 1);
  } else {
    setup.comparedAlgorithms = algorithms;
  }
  setup.placement = discoverProcessPlacement(environmentValue);
  requireBootstrapAddress(setup.placement, environmentValue);
  const int nranks = setup.placement.count * setup.options.threads;
  if (test.usesRoot() && setup.options.root >= nranks) {
    throw UsageError("root " + std::to_string(setup.options.root) + " is not a rank of " + std::to_string(nranks));
  }
  return setup;
}

// One communicator per compared algorithm, split from `parent` with SLIMECCL_ALGO set to force it
// (unset for the tuner's choice). The library reads the variable in the split.
std::vector<std::unique_ptr<RankComm>> splitPerAlgorithm(LocalProcess& process, int thread, RankComm& parent,
                                                         const CollectiveTest& test, const RunSetup& setup) {
  std::vector<std::unique_ptr<RankComm>> comms;
  for (const std::string& name : setup.comparedAlgorithms) {
    // One thread per process writes the environment, while none of its rank threads reads it.
    if (thread == 0) {
      if (name == kTunerChoice) {
        unsetenv("SLIMECCL_ALGO");
      } else {
        setenv("SLIMECCL_ALGO", algoEnvValue(test.algoCollective(), name).c_str(), 1);
      }
    }
    process.threadBarrier.arrive_and_wait();
    comms.push_back(std::make_unique<RankComm>(parent, streamMode(setup.options)));
    process.threadBarrier.arrive_and_wait();
  }
  return comms;
}

void compareAlgorithms(LocalProcess& process, int thread, RankComm& rankComm, BenchRunner& runner,
                       const CollectiveTest& test, const RunSetup& setup) {
  const std::vector<std::unique_ptr<RankComm>> comms = splitPerAlgorithm(process, thread, rankComm, test, setup);
  std::vector<AlgorithmComm> entries;
  for (size_t index = 0; index < comms.size(); ++index) {
    entries.push_back({setup.comparedAlgorithms[index], comms[index].get()});
  }
  runner.runComparison(entries);
  // No rank leaves a communicator a peer may still be finishing an op on.
  rankComm.barrier();
}

// One rank thread from init to teardown; returns its count of failed checks (the same on every rank).
int64_t runRank(LocalProcess& process, int thread, const CollectiveTest& test, const RunSetup& setup) {
  if (setup.options.deviceBuffers) useGpuOfRank(globalRank(setup.placement.rank, setup.options.threads, thread));
  RankComm rankComm(process, thread, streamMode(setup.options));
  const std::vector<RankDescription> ranks = describeAllRanks(rankComm);
  const bool comparing = !setup.comparedAlgorithms.empty();
  if (rankComm.rank() == 0) {
    const std::string header =
        comparing ? formatComparisonHeader(setup.comparedAlgorithms, setup.options.rounds) : formatColumnHeader();
    std::fputs((formatSettings(setup.options, setup.algoSetting) + formatDevices(ranks) + header).c_str(), stdout);
    std::fflush(stdout);
  }
  BenchRunner runner(rankComm, test, setup.options);
  if (comparing) {
    compareAlgorithms(process, thread, rankComm, runner, test, setup);
  } else {
    runner.runAll();
  }
  if (rankComm.rank() == 0) {
    std::fputs(formatFooter(runner.outOfBoundsValues(), runner.averageBusBw()).c_str(), stdout);
    std::fflush(stdout);
  }
  rankComm.barrier();
  return runner.outOfBoundsValues();
}

}  // namespace

int runPerfMain(int argc, char** argv, const CollectiveTest& test) {
  const std::string program = programName(argv[0]);
  RunSetup setup;
  try {
    setup = prepareRun(argc, argv, test, program);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "%s: %s\nRun '%s -h' for the options.\n", program.c_str(), error.what(), program.c_str());
    return kUsageErrorStatus;
  }
  if (setup.options.help) {
    std::fputs(usageText(program).c_str(), stdout);
    return 0;
  }
  if (setup.options.version) {
    std::fputs(slimeccl::versionLine(program).c_str(), stdout);
    return 0;
  }

  const int firstRank = globalRank(setup.placement.rank, setup.options.threads, 0);
  slimecclUniqueId id{};
  checkCall(slimecclGetUniqueId(&id), "slimecclGetUniqueId", firstRank, nullptr);
  LocalProcess process(setup.placement, setup.options.threads, id);

  std::vector<int64_t> failedChecks(static_cast<size_t>(setup.options.threads), 0);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < setup.options.threads; ++thread) {
    threads.emplace_back([&, thread] {
      try {
        failedChecks[static_cast<size_t>(thread)] = runRank(process, thread, test, setup);
      } catch (const std::exception& error) {
        std::fflush(stdout);
        std::fprintf(stderr, "rank %d: %s\n", globalRank(setup.placement.rank, setup.options.threads, thread),
                     error.what());
        std::_Exit(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return failedChecks.front() != 0 ? 1 : 0;
}

}  // namespace slimeccl_perf
