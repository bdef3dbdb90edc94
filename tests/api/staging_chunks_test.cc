// Ops through host staging cut into chunks (src/exec/chunked_run.h), forced onto host memory with
// SLIMECCL_STAGING_CHUNKS=all and 64 KiB chunks: every collective's large calls (about 1 MiB,
// odd sizes, in and out of place) and its sweep of datatypes, ops, roots and counts right, and a
// Send/Recv ring in a group; the route is checked by the chunks each rank counted
// (slimecclDevicePathInfo::stagedChunks), not only the data. Without a GPU and without the setting
// nothing is cut.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "buffers.h"
#include "collective_checks.h"
#include "collective_sweep.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

RunOptions chunked() {
  RunOptions options;
  options.env["SLIMECCL_STAGING_CHUNKS"] = "all";
  options.env["SLIMECCL_STAGING_CHUNK_BYTES"] = "64K";
  return options;
}

unsigned long long stagedChunks(slimecclComm_t comm) {
  slimecclDevicePathInfo info{};
  RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
  return info.stagedChunks;
}

// The chunks a call is cut into: each chunk's buffers hold at most kChunkBytes.
unsigned long long chunksOf(Collective collective, const CallShape& call, int nranks) {
  const bool blocks = collective == Collective::kAllGather || collective == Collective::kReduceScatter ||
                      collective == Collective::kAlltoAll;
  const size_t perBuffer = call.count * datatypeSize(call.datatype) * (blocks ? nranks : 1);
  if (perBuffer <= kChunkBytes) return 0;
  const size_t perChunk = std::max<size_t>(1, kChunkBytes / (datatypeSize(call.datatype) * (blocks ? nranks : 1)));
  return (call.count + perChunk - 1) / perChunk;
}

struct ChunkCase {
  Collective collective;
  Launch launch;
  int nranks;
};

std::string caseName(const ::testing::TestParamInfo<ChunkCase>& info) {
  return collectiveName(info.param.collective) + std::string("_") + launchName(info.param.launch) + "_" +
         std::to_string(info.param.nranks) + "ranks";
}

std::vector<ChunkCase> chunkCases() {
  std::vector<ChunkCase> cases;
  for (Collective c : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kReduce, Collective::kBroadcast,
                       Collective::kAlltoAll, Collective::kAllGather})
    for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads})
      for (int nranks : {2, 3}) cases.push_back(ChunkCase{c, launch, nranks});
  return cases;
}

class StagingChunks : public ::testing::TestWithParam<ChunkCase> {};

TEST_P(StagingChunks, LargeCallsAndTheSweepRunRightInChunks) {
  const ChunkCase param = GetParam();
  runRanks(
      param.launch, param.nranks,
      [param](int, slimecclComm_t comm) {
        const int nranks = commSize(comm);
        unsigned long long expected = 0;
        for (const CallShape& call : largeCalls(param.collective, nranks)) {
          const unsigned long long before = stagedChunks(comm);
          checkCall(param.collective, comm, call);
          const unsigned long long cut = stagedChunks(comm) - before;
          RANK_CHECK(cut == chunksOf(param.collective, call, nranks) && cut > 1, describeCall(param.collective, call),
                     " ran as ", cut, " chunks, not ", chunksOf(param.collective, call, nranks));
          expected += cut;
        }
        runCalls(param.collective, comm, sweepCalls(param.collective, nranks));
        RANK_CHECK(stagedChunks(comm) >= expected, "the chunk count went back");
      },
      chunked());
}

INSTANTIATE_TEST_SUITE_P(Collectives, StagingChunks, ::testing::ValuesIn(chunkCases()), caseName);

// Each rank sends 1 MiB + 5 bytes to the next and receives as much from the one before, in one
// group: the Send and the Recv are cut alike on both ends, and every byte arrives.
TEST(StagingChunksP2P, ARingOfSendsAndRecvsInAGroup) {
  for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads}) {
    runRanks(
        launch, 3,
        [](int rank, slimecclComm_t comm) {
          const int nranks = commSize(comm);
          const size_t bytes = (size_t{1} << 20) + 5;
          std::vector<uint8_t> out(bytes), in(bytes, 0);
          for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(rank * 31 + i * 7);
          const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
          const unsigned long long before = stagedChunks(comm);
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(out.data(), bytes, slimecclUint8, next, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(in.data(), bytes, slimecclUint8, prev, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          for (size_t i = 0; i < bytes; ++i)
            RANK_CHECK(in[i] == static_cast<uint8_t>(prev * 31 + i * 7), "byte ", i, " from rank ", prev);
          const unsigned long long expected = 2 * ((bytes + kChunkBytes - 1) / kChunkBytes);
          RANK_CHECK(stagedChunks(comm) - before == expected, "the Send and Recv ran as ", stagedChunks(comm) - before,
                     " chunks, not ", expected);
        },
        chunked());
  }
}

// On a comm where no rank uses a GPU, nothing is cut unless asked for.
TEST(StagingChunksDefault, HostOnlyCommsCutNothing) {
  runRanks(Launch::kForkedShm, 2, [](int, slimecclComm_t comm) {
    slimecclDevicePathInfo info{};
    RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
    for (const CallShape& call : largeCalls(Collective::kAllReduce, commSize(comm)))
      checkCall(Collective::kAllReduce, comm, call);
    RANK_CHECK(stagedChunks(comm) == 0, "a host-only comm cut ", stagedChunks(comm), " chunks");
  });
}

}  // namespace
}  // namespace slimeccl_test
