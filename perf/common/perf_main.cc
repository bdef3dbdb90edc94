#include "common/perf_main.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_runner.h"
#include "common/call_check.h"
#include "common/cross_rank.h"
#include "common/options.h"
#include "common/process_env.h"
#include "common/report.h"
#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

struct RunSetup {
  Options options;
  std::string algoSetting;  // the SLIMECCL_ALGO value -A set, empty without -A
  ProcessPlacement placement;
};

const char* environmentValue(const char* name) { return std::getenv(name); }

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
  if (!setup.options.algo.empty()) {
    if (test.algoCollective().empty()) throw UsageError(program + " has no algorithm to choose with -A");
    setup.algoSetting = algoEnvValue(test.algoCollective(), setup.options.algo);
    // Read by the library when the communicators are created.
    setenv("SLIMECCL_ALGO", setup.algoSetting.c_str(), 1);
  }
  setup.placement = discoverProcessPlacement(environmentValue);
  requireBootstrapAddress(setup.placement, environmentValue);
  const int nranks = setup.placement.count * setup.options.threads;
  if (test.usesRoot() && setup.options.root >= nranks) {
    throw UsageError("root " + std::to_string(setup.options.root) + " is not a rank of " + std::to_string(nranks));
  }
  return setup;
}

// One rank thread from init to teardown; returns its count of failed checks (the same on every rank).
int64_t runRank(LocalProcess& process, int thread, const CollectiveTest& test, const RunSetup& setup) {
  RankComm rankComm(process, thread, !setup.options.blocking);
  const std::vector<RankDescription> ranks = describeAllRanks(rankComm);
  if (rankComm.rank() == 0) {
    std::fputs((formatSettings(setup.options, setup.algoSetting) + formatDevices(ranks) + formatColumnHeader()).c_str(),
               stdout);
    std::fflush(stdout);
  }
  BenchRunner runner(rankComm, test, setup.options);
  runner.runAll();
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
    return 1;
  }
  if (setup.options.help) {
    std::fputs(usageText(program).c_str(), stdout);
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
