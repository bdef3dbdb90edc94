// AllGatherOverlap with every AllGather algorithm, forked ranks over shm and sockets and threaded
// ranks, 1 to 4 ranks: every datatype, empty to multi-chunk blocks, in and out of place, blocking
// and on a host stream. Checks the gathered data, and that each rank's block reaches the callback
// exactly once, own block first, complete, one callback at a time, off the calling thread.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "algorithm_case.h"
#include "buffers.h"
#include "chunk_log.h"
#include "launch_case.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// Small chunks, so that blocks of a few KiB already arrive in many pieces.
constexpr const char* kChunkBytes = "4096";

struct Call {
  slimecclDataType_t datatype;
  size_t count;
  bool in_place;
  bool on_stream;
};

std::vector<Call> calls() {
  std::vector<Call> result;
  for (slimecclDataType_t datatype : kAllDatatypes)
    for (size_t count : {size_t{0}, size_t{1}, size_t{37}})
      for (bool in_place : {false, true}) result.push_back({datatype, count, in_place, datatype % 2 == 1});
  // Several chunks per block, on both paths.
  for (bool on_stream : {false, true})
    for (bool in_place : {false, true}) result.push_back({slimecclInt8, 40000 + 3, in_place, on_stream});
  return result;
}

void run_call(const Call& call, int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream, uint64_t seed) {
  const size_t block_bytes = call.count * datatype_size(call.datatype);
  std::vector<unsigned char> recv(block_bytes * nranks + 1, 0xee);
  const std::vector<unsigned char> mine = block_pattern(rank, block_bytes, seed);
  std::vector<unsigned char> send = mine;
  unsigned char* own = recv.data() + static_cast<size_t>(rank) * block_bytes;
  if (call.in_place) std::copy(mine.begin(), mine.end(), own);
  const void* sendbuff = call.in_place ? static_cast<const void*>(own) : send.data();
  ChunkLog log(nranks, call.count, block_bytes, seed);
  RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(sendbuff, recv.data(), call.count, call.datatype, ChunkLog::on_chunk,
                                              &log, comm, call.on_stream ? stream : nullptr),
                     comm);
  if (call.on_stream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  log.verify(rank, recv.data(), std::this_thread::get_id());
  for (int r = 0; r < nranks; ++r)
    RANK_CHECK(memcmp(recv.data() + r * block_bytes, block_pattern(r, block_bytes, seed).data(), block_bytes) == 0,
               "block ", r, " of recvbuff is wrong");
  RANK_CHECK(recv.back() == 0xee, "a byte past recvbuff was written");
  RANK_CHECK(send == mine, "the send buffer changed");
}

void run_all_calls(int rank, slimecclComm_t comm) {
  int nranks = 0;
  RANK_CHECK_SUCCESS(slimecclCommCount(comm, &nranks), comm);
  slimecclStream_t stream = nullptr;
  RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
  uint64_t seed = 0;
  for (const Call& call : calls()) {
    with_context(concat("AllGatherOverlap of ", call.count, " x datatype ", static_cast<int>(call.datatype),
                        call.in_place ? " in place" : " out of place", call.on_stream ? " on a stream" : ""),
                 [&] { run_call(call, rank, nranks, comm, stream, ++seed); });
  }
  RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
}

class AllGatherOverlapSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(AllGatherOverlapSweep, CallbacksAndData) {
  const AlgorithmCase& c = GetParam();
  RunOptions options = algorithm_options(c);
  options.env["SLIMECCL_CHUNK_BYTES"] = kChunkBytes;
  // Forked ranks of the hierarchical algorithm claim two simulated hosts, so that it gathers
  // through host leaders instead of falling back to the ring.
  const bool two_hosts = c.algorithm == "hier";
  run_ranks_raw(
      c.launch, c.nranks,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        if (two_hosts) setenv("SLIMECCL_HOSTID", concat("simulated-host-", rank % 2).c_str(), 1);
        with_comm(rank, nranks, id, [&](slimecclComm_t comm) { run_all_calls(rank, comm); });
      },
      options);
}

// Two overlap calls in one group run together; each one's callbacks still come once per rank,
// own block first, and the group ends after the last callback of both.
class AllGatherOverlapGroup : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(AllGatherOverlapGroup, TwoCallsInOneGroup) {
  RunOptions options;
  options.env["SLIMECCL_CHUNK_BYTES"] = kChunkBytes;
  const int nranks = GetParam().nranks;
  run_ranks(
      GetParam().launch, nranks,
      [nranks](int rank, slimecclComm_t comm) {
        const size_t counts[2] = {5000, 3};
        std::vector<unsigned char> send[2], recv[2];
        std::unique_ptr<ChunkLog> logs[2];
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        for (int i = 0; i < 2; ++i) {
          send[i] = block_pattern(rank, counts[i] * 4, 50 + i);
          recv[i].assign(counts[i] * 4 * nranks, 0);
          logs[i] = std::make_unique<ChunkLog>(nranks, counts[i], counts[i] * 4, 50 + i);
          RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(send[i].data(), recv[i].data(), counts[i], slimecclInt32,
                                                      ChunkLog::on_chunk, logs[i].get(), comm, nullptr),
                             comm);
        }
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        for (int i = 0; i < 2; ++i) {
          with_context(concat("call ", i), [&] { logs[i]->verify(rank, recv[i].data(), std::this_thread::get_id()); });
        }
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherOverlapGroup,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                          {1, 3})),
                         launch_case_name);

std::vector<AlgorithmCase> overlap_cases() {
  std::vector<AlgorithmCase> cases = algorithm_cases(
      Collective::kAllGather, false, {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads}, {1, 2, 3, 4});
  // Threads share one environment, so they cannot claim different hosts.
  std::erase_if(cases, [](const AlgorithmCase& c) { return c.algorithm == "hier" && c.launch == Launch::kThreads; });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AllGatherOverlapSweep, ::testing::ValuesIn(overlap_cases()), algorithm_case_name);

}  // namespace
}  // namespace slimeccl_test
