// Every collective and Send/Recv over an external net module: libslimeccl-net-example.so
// (tests/net_plugin/example_net_plugin.c), loaded by SLIMECCL_NET=example on four forked ranks.
// The data is checked by the api suite's sweeps; the route by the plugin's own counts, read from
// the copy the library loaded: it listed its devices, every message it moved was posted by the
// library and every buffer registered (the plugin refuses one that is not), and messages met
// their receives by tag.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "algorithm_case.h"
#include "collective_sweep.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

constexpr int kRanks = 4;

struct PluginCounts {
  uint64_t devices = 0, registrations = 0, messages = 0;
};

// The counts of the plugin copy this process loaded (dlopen finds the library's own).
PluginCounts pluginCounts() {
  PluginCounts counts;
  void* lib = dlopen(EXAMPLE_PLUGIN_FILE, RTLD_NOW | RTLD_NOLOAD);
  RANK_CHECK(lib != nullptr, "the example plugin was not loaded by the library");
  using CountsFn = void (*)(uint64_t*, uint64_t*, uint64_t*);
  auto countsOf = reinterpret_cast<CountsFn>(dlsym(lib, "exampleNetCounts"));
  RANK_CHECK(countsOf != nullptr, "the plugin exports no exampleNetCounts");
  countsOf(&counts.devices, &counts.registrations, &counts.messages);
  dlclose(lib);
  return counts;
}

RunOptions overThePlugin() {
  RunOptions options;
  options.env["SLIMECCL_NET"] = "example";
  options.deadline = std::chrono::seconds(150);
  return options;
}

TEST(ExampleNetPlugin, EveryCollectiveRunsOverIt) {
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        for (Collective collective : {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllReduce,
                                      Collective::kBroadcast, Collective::kReduce, Collective::kAlltoAll}) {
          const PluginCounts before = pluginCounts();
          runCalls(collective, comm, sweepCalls(collective, kRanks));
          runCalls(collective, comm, largeCalls(collective, kRanks));
          const PluginCounts after = pluginCounts();
          RANK_CHECK(after.messages > before.messages, collectiveName(collective), " moved no message over the plugin");
        }
        const PluginCounts counts = pluginCounts();
        RANK_CHECK(counts.devices >= 1, "the library never listed the plugin's devices");
        RANK_CHECK(counts.registrations == counts.messages, counts.registrations, " registrations for ",
                   counts.messages, " messages");
      },
      overThePlugin());
}

TEST(ExampleNetPlugin, SendRecvRingRunsOverIt) {
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        for (size_t count : {size_t{1}, size_t{4099}, size_t{1} << 20}) {
          std::vector<int32_t> send(count), recv(count, -1);
          for (size_t i = 0; i < count; ++i) send[i] = static_cast<int32_t>(rank * 100003 + i);
          const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
          const PluginCounts before = pluginCounts();
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(send.data(), count, slimecclInt32, next, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(recv.data(), count, slimecclInt32, prev, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(recv[i] == static_cast<int32_t>(prev * 100003 + i), "count ", count, " element ", i, " is ",
                       recv[i]);
          RANK_CHECK(pluginCounts().messages > before.messages, "count ", count, " moved no message over the plugin");
        }
      },
      overThePlugin());
}

}  // namespace
}  // namespace slimeccl_test
