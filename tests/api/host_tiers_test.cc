// AllGather in host tiers (src/exec/host_tiers.h) on host buffers, with SLIMECCL_HOST_TIERS=all
// (on GPU machines the tiers serve comms whose ranks use GPUs; tests/cuda covers device buffers):
// hosts simulated by forked ranks with their own SLIMECCL_HOSTID, contiguous and interleaved,
// two and three hosts; in and out of place, blocks of one piece and of several, on the calling
// thread and on a host stream. Each call checks the data and that it went in tiers; a call inside
// a group and a comm whose hosts hold uneven rank counts run as one op.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct TiersCase {
  std::string layout;
  std::vector<int> hostOf;
  Launch launch;
};

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const TiersCase& tiersCase, std::ostream* os) {
  *os << tiersCase.layout << ", " << launchName(tiersCase.launch);
}

// Pieces of 4 x 64 KiB: a block of 300000 int32 crosses between hosts in five.
RunOptions tierOptions() {
  RunOptions options;
  options.env["SLIMECCL_HOST_TIERS"] = "all";
  options.env["SLIMECCL_STAGING_CHUNK_BYTES"] = "64K";
  options.deadline = std::chrono::seconds(120);
  return options;
}

int32_t valueOf(int rank, size_t i) { return static_cast<int32_t>(rank * 1000003 + i * 7 + 1); }

slimecclDevicePathInfo pathOf(slimecclComm_t comm) {
  slimecclDevicePathInfo info{};
  RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
  return info;
}

slimecclRoute_t lastRoute(slimecclComm_t comm) {
  slimecclOpRoute route{};
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  return route.route;
}

// One AllGather of `count` int32 per rank, checked on every rank.
void allGather(slimecclComm_t comm, int rank, int nranks, size_t count, bool inPlace, slimecclStream_t stream,
               bool grouped) {
  std::vector<int32_t> recv(count * nranks, -1), send(count);
  for (size_t i = 0; i < count; ++i) (inPlace ? recv[rank * count + i] : send[i]) = valueOf(rank, i);
  const int32_t* from = inPlace ? recv.data() + rank * count : send.data();
  if (grouped) RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
  RANK_CHECK_SUCCESS(slimecclAllGather(from, recv.data(), count, slimecclInt32, comm, stream), comm);
  if (grouped) RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
  if (stream != nullptr) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  for (int r = 0; r < nranks; ++r)
    for (size_t i = 0; i < count; ++i)
      RANK_CHECK(recv[r * count + i] == valueOf(r, i), "count ", count, inPlace ? " in place" : "", ": rank ", r,
                 " element ", i, " is ", recv[r * count + i]);
}

class HostTiers : public ::testing::TestWithParam<TiersCase> {};

TEST_P(HostTiers, AllGatherGoesInTiersAndGathersEveryBlock) {
  const TiersCase& tiersCase = GetParam();
  const int nranks = static_cast<int>(tiersCase.hostOf.size());
  runRanksRaw(
      tiersCase.launch, nranks,
      [&](int rank, int size, const slimecclUniqueId& id) {
        setenv("SLIMECCL_HOSTID", ("tier-host-" + std::to_string(tiersCase.hostOf[rank])).c_str(), 1);
        withComm(rank, size, id, [&](slimecclComm_t comm) {
          RANK_CHECK(pathOf(comm).hostTiers == 1, "the comm has no host tiers");
          slimecclStream_t stream;
          RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
          unsigned long long calls = 0;
          for (size_t count : {size_t{1}, size_t{4099}, size_t{300000}})
            for (bool inPlace : {false, true})
              for (slimecclStream_t on : {static_cast<slimecclStream_t>(nullptr), stream}) {
                allGather(comm, rank, size, count, inPlace, on, false);
                RANK_CHECK(lastRoute(comm) == slimecclRouteHostTiers, "count ", count, " went ", lastRoute(comm));
                RANK_CHECK(pathOf(comm).tieredAllGathers == ++calls,
                           "tiered AllGathers: ", pathOf(comm).tieredAllGathers, ", expected ", calls);
              }
          // Inside a group the AllGather runs as one op, as on a comm without tiers.
          allGather(comm, rank, size, 4099, false, nullptr, true);
          RANK_CHECK(lastRoute(comm) == slimecclRouteNet, "an AllGather in a group went ", lastRoute(comm));
          RANK_CHECK(pathOf(comm).tieredAllGathers == calls, "an AllGather in a group went in tiers");
          RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
        });
      },
      tierOptions());
}

INSTANTIATE_TEST_SUITE_P(SimulatedHosts, HostTiers,
                         ::testing::Values(TiersCase{"TwoHostsOfTwo", {0, 0, 1, 1}, Launch::kForkedShm},
                                           TiersCase{"TwoHostsOfTwo", {0, 0, 1, 1}, Launch::kForkedSocket},
                                           TiersCase{"TwoHostsInterleaved", {0, 1, 0, 1}, Launch::kForkedShm},
                                           TiersCase{
                                               "ThreeHostsOfTwoInterleaved", {0, 1, 2, 2, 1, 0}, Launch::kForkedShm}),
                         [](const ::testing::TestParamInfo<TiersCase>& info) {
                           return info.param.layout + "_" + launchName(info.param.launch);
                         });

// Tiers need as many ranks on every host, at least two: other comms run AllGather as one op, and
// so does every comm where a rank refuses the tiers.
TEST(HostTiersNotTaken, UnevenHostsOrARankThatRefusesRunAsOneOp) {
  struct Case {
    std::vector<int> hostOf;
    int refusingRank;  // sets SLIMECCL_HOST_TIERS=off; -1: none
  };
  for (const Case& c : {Case{{0, 0, 0, 1, 1}, -1}, Case{{0, 1, 2}, -1}, Case{{0, 0, 1, 1}, 2}}) {
    const int nranks = static_cast<int>(c.hostOf.size());
    runRanksRaw(
        Launch::kForkedShm, nranks,
        [&](int rank, int size, const slimecclUniqueId& id) {
          setenv("SLIMECCL_HOSTID", ("tier-host-" + std::to_string(c.hostOf[rank])).c_str(), 1);
          if (rank == c.refusingRank) setenv("SLIMECCL_HOST_TIERS", "off", 1);
          withComm(rank, size, id, [&](slimecclComm_t comm) {
            RANK_CHECK(pathOf(comm).hostTiers == 0, "the comm has host tiers");
            allGather(comm, rank, size, 4099, false, nullptr, false);
            RANK_CHECK(lastRoute(comm) == slimecclRouteNet, "the AllGather went ", lastRoute(comm));
          });
        },
        tierOptions());
  }
}

}  // namespace
}  // namespace slimeccl_test
