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

unsigned long long staged_chunks(slimecclComm_t comm) {
  slimecclDevicePathInfo info{};
  RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
  return info.stagedChunks;
}

// The chunks a call is cut into: each chunk's buffers hold at most kChunkBytes.
unsigned long long chunks_of(Collective collective, const CallShape& call, int nranks) {
  const bool blocks = collective == Collective::kAllGather || collective == Collective::kReduceScatter ||
                      collective == Collective::kAlltoAll;
  const size_t per_buffer = call.count * datatype_size(call.datatype) * (blocks ? nranks : 1);
  if (per_buffer <= kChunkBytes) return 0;
  const size_t per_chunk = std::max<size_t>(1, kChunkBytes / (datatype_size(call.datatype) * (blocks ? nranks : 1)));
  return (call.count + per_chunk - 1) / per_chunk;
}

struct ChunkCase {
  Collective collective;
  Launch launch;
  int nranks;
};

std::string case_name(const ::testing::TestParamInfo<ChunkCase>& info) {
  return collective_name(info.param.collective) + std::string("_") + launch_name(info.param.launch) + "_" +
         std::to_string(info.param.nranks) + "ranks";
}

std::vector<ChunkCase> chunk_cases() {
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
  run_ranks(
      param.launch, param.nranks,
      [param](int, slimecclComm_t comm) {
        const int nranks = comm_size(comm);
        unsigned long long expected = 0;
        for (const CallShape& call : large_calls(param.collective, nranks)) {
          const unsigned long long before = staged_chunks(comm);
          check_call(param.collective, comm, call);
          const unsigned long long cut = staged_chunks(comm) - before;
          RANK_CHECK(cut == chunks_of(param.collective, call, nranks) && cut > 1, describe_call(param.collective, call),
                     " ran as ", cut, " chunks, not ", chunks_of(param.collective, call, nranks));
          expected += cut;
        }
        run_calls(param.collective, comm, sweep_calls(param.collective, nranks));
        RANK_CHECK(staged_chunks(comm) >= expected, "the chunk count went back");
      },
      chunked());
}

INSTANTIATE_TEST_SUITE_P(Collectives, StagingChunks, ::testing::ValuesIn(chunk_cases()), case_name);

// Each rank sends 1 MiB + 5 bytes to the next and receives as much from the one before, in one
// group: the Send and the Recv are cut alike on both ends, and every byte arrives.
TEST(StagingChunksP2P, ARingOfSendsAndRecvsInAGroup) {
  for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads}) {
    run_ranks(
        launch, 3,
        [](int rank, slimecclComm_t comm) {
          const int nranks = comm_size(comm);
          const size_t bytes = (size_t{1} << 20) + 5;
          std::vector<uint8_t> out(bytes), in(bytes, 0);
          for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(rank * 31 + i * 7);
          const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
          const unsigned long long before = staged_chunks(comm);
          RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
          RANK_CHECK_SUCCESS(slimecclSend(out.data(), bytes, slimecclUint8, next, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(in.data(), bytes, slimecclUint8, prev, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
          for (size_t i = 0; i < bytes; ++i)
            RANK_CHECK(in[i] == static_cast<uint8_t>(prev * 31 + i * 7), "byte ", i, " from rank ", prev);
          const unsigned long long expected = 2 * ((bytes + kChunkBytes - 1) / kChunkBytes);
          RANK_CHECK(staged_chunks(comm) - before == expected, "the Send and Recv ran as ",
                     staged_chunks(comm) - before, " chunks, not ", expected);
        },
        chunked());
  }
}

// On a comm where no rank uses a GPU, nothing is cut unless asked for.
TEST(StagingChunksDefault, HostOnlyCommsCutNothing) {
  run_ranks(Launch::kForkedShm, 2, [](int, slimecclComm_t comm) {
    slimecclDevicePathInfo info{};
    RANK_CHECK_SUCCESS(slimecclCommGetDevicePathInfo(comm, &info), comm);
    for (const CallShape& call : large_calls(Collective::kAllReduce, comm_size(comm)))
      check_call(Collective::kAllReduce, comm, call);
    RANK_CHECK(staged_chunks(comm) == 0, "a host-only comm cut ", staged_chunks(comm), " chunks");
  });
}

}  // namespace
}  // namespace slimeccl_test
