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
  bool inPlace;
  bool onStream;
};

std::vector<Call> calls() {
  std::vector<Call> result;
  for (slimecclDataType_t datatype : kAllDatatypes)
    for (size_t count : {size_t{0}, size_t{1}, size_t{37}})
      for (bool inPlace : {false, true}) result.push_back({datatype, count, inPlace, datatype % 2 == 1});
  // Several chunks per block, on both paths.
  for (bool onStream : {false, true})
    for (bool inPlace : {false, true}) result.push_back({slimecclInt8, 40000 + 3, inPlace, onStream});
  return result;
}

void runCall(const Call& call, int rank, int nranks, slimecclComm_t comm, slimecclStream_t stream, uint64_t seed) {
  const size_t blockBytes = call.count * datatypeSize(call.datatype);
  std::vector<unsigned char> recv(blockBytes * nranks + 1, 0xee);
  const std::vector<unsigned char> mine = blockPattern(rank, blockBytes, seed);
  std::vector<unsigned char> send = mine;
  unsigned char* own = recv.data() + static_cast<size_t>(rank) * blockBytes;
  if (call.inPlace) std::copy(mine.begin(), mine.end(), own);
  const void* sendbuff = call.inPlace ? static_cast<const void*>(own) : send.data();
  ChunkLog log(nranks, call.count, blockBytes, seed);
  RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(sendbuff, recv.data(), call.count, call.datatype, ChunkLog::onChunk, &log,
                                              comm, call.onStream ? stream : nullptr),
                     comm);
  if (call.onStream) RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  log.verify(rank, recv.data(), std::this_thread::get_id());
  for (int r = 0; r < nranks; ++r)
    RANK_CHECK(memcmp(recv.data() + r * blockBytes, blockPattern(r, blockBytes, seed).data(), blockBytes) == 0,
               "block ", r, " of recvbuff is wrong");
  RANK_CHECK(recv.back() == 0xee, "a byte past recvbuff was written");
  RANK_CHECK(send == mine, "the send buffer changed");
}

void runAllCalls(int rank, slimecclComm_t comm) {
  int nranks = 0;
  RANK_CHECK_SUCCESS(slimecclCommCount(comm, &nranks), comm);
  slimecclStream_t stream = nullptr;
  RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
  uint64_t seed = 0;
  for (const Call& call : calls()) {
    withContext(concat("AllGatherOverlap of ", call.count, " x datatype ", static_cast<int>(call.datatype),
                       call.inPlace ? " in place" : " out of place", call.onStream ? " on a stream" : ""),
                [&] { runCall(call, rank, nranks, comm, stream, ++seed); });
  }
  RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
}

class AllGatherOverlapSweep : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(AllGatherOverlapSweep, CallbacksAndData) {
  const AlgorithmCase& c = GetParam();
  RunOptions options = algorithmOptions(c);
  options.env["SLIMECCL_CHUNK_BYTES"] = kChunkBytes;
  // Forked ranks of the hierarchical algorithm claim two simulated hosts, so that it gathers
  // through host leaders instead of falling back to the ring.
  const bool twoHosts = c.algorithm == "hier";
  runRanksRaw(
      c.launch, c.nranks,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        if (twoHosts) setenv("SLIMECCL_HOSTID", concat("simulated-host-", rank % 2).c_str(), 1);
        withComm(rank, nranks, id, [&](slimecclComm_t comm) { runAllCalls(rank, comm); });
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
  runRanks(
      GetParam().launch, nranks,
      [nranks](int rank, slimecclComm_t comm) {
        const size_t counts[2] = {5000, 3};
        std::vector<unsigned char> send[2], recv[2];
        std::unique_ptr<ChunkLog> logs[2];
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        for (int i = 0; i < 2; ++i) {
          send[i] = blockPattern(rank, counts[i] * 4, 50 + i);
          recv[i].assign(counts[i] * 4 * nranks, 0);
          logs[i] = std::make_unique<ChunkLog>(nranks, counts[i], counts[i] * 4, 50 + i);
          RANK_CHECK_SUCCESS(slimecclAllGatherOverlap(send[i].data(), recv[i].data(), counts[i], slimecclInt32,
                                                      ChunkLog::onChunk, logs[i].get(), comm, nullptr),
                             comm);
        }
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        for (int i = 0; i < 2; ++i) {
          withContext(concat("call ", i), [&] { logs[i]->verify(rank, recv[i].data(), std::this_thread::get_id()); });
        }
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, AllGatherOverlapGroup,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {1, 3})),
                         launchCaseName);

std::vector<AlgorithmCase> overlapCases() {
  std::vector<AlgorithmCase> cases = algorithmCases(
      Collective::kAllGather, false, {Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads}, {1, 2, 3, 4});
  // Threads share one environment, so they cannot claim different hosts.
  std::erase_if(cases, [](const AlgorithmCase& c) { return c.algorithm == "hier" && c.launch == Launch::kThreads; });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AllGatherOverlapSweep, ::testing::ValuesIn(overlapCases()), algorithmCaseName);

}  // namespace
}  // namespace slimeccl_test
