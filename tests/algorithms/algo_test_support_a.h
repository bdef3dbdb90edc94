// Shared by the AllGather, AlltoAll and Broadcast schedule tests: builds every rank's schedule for
// one request, checks it against the rules of algorithms/schedule.h (including those a simulation
// cannot see, such as missing dependencies), simulates it, and makes recognisable test data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/simulator.h"

namespace slimeccl::algotest {

// Every rank count from 1 to 64; then larger ones, up to atMost.
std::vector<int> ranksUpTo64();
std::vector<int> largeRankCounts(int atMost);

// Byte i of block `block` that rank `source` contributes; differs between sources and blocks.
char patternByte(int source, int block, size_t i);
// The blockBytes bytes of block `block` from rank `source`.
std::vector<char> patternBlock(int source, int block, size_t blockBytes);
// Filler for output bytes that the collective must overwrite.
constexpr char kUnwritten = 0x5a;
// "" when actual equals expected, else where they first differ: "byte 13 (block 3 of 4 bytes)";
// blockBytes 0: "byte 13".
std::string firstDifference(const std::vector<char>& expected, const std::vector<char>& actual, size_t blockBytes);

// A request for rank 0 of nranks; the other fields keep their defaults.
ScheduleRequest makeRequest(Coll coll, Algo algo, int nranks, size_t count, size_t typeBytes);

// "AllGather hd nranks=5 count=3 typeBytes=4 in-place"
std::string describeRequest(const ScheduleRequest& request);

// What a collective moves per rank, as docs/algorithms.md states it.
struct Traffic {
  size_t bytesSent;
  size_t sends;
};

// The first breach of the schedule rules, or "":
//  - no Send, Recv or RecvReduce of zero bytes, and no peer that is the rank itself;
//  - dependsOn names an earlier step;
//  - a rank with an empty Send buffer (in place; Broadcast off the root) never references it;
//  - what a rank sends to a peer, in list order, matches what the peer receives from it;
//  - two steps that touch overlapping bytes, one of them writing, are ordered by dependsOn or by
//    the list order of local steps, taking into account that a transfer depending on a transfer
//    of a similar size is only ordered chunk by chunk;
//  - sends to one peer become ready in list order (the executor posts them in that order).
// The two ordering rules, quadratic in the steps, are checked on the ranks of orderChecked only.
std::string findRuleViolation(const std::vector<Schedule>& schedules, const std::vector<RankBuffers>& buffers,
                              const std::vector<int>& orderChecked);

// Every rank up to 64 ranks; above, the first two, the middle one, the last one and the root.
std::vector<int> ranksToCheckOrder(int nranks, int root);

// Builds request's schedule for every rank, checks the rules and simulates it on buffers (whose
// send and recv the caller has sized and filled). Returns "" or what went wrong.
std::string buildCheckAndSimulate(ScheduleRequest request, std::vector<RankBuffers>& buffers, SimulationResult* result);

}  // namespace slimeccl::algotest
