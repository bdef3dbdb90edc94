// SLIMECCL_ALGO: a value naming an unknown collective, or an algorithm the collective does not
// have, makes communicator creation fail with InvalidArgument and a sentence naming the variable;
// a value forcing every collective at once is accepted and obeyed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithm_case.h"
#include "collective_checks.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct RejectedValue {
  const char* name;
  const char* value;
};

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const RejectedValue& rejected, std::ostream* os) { *os << "SLIMECCL_ALGO=" << rejected.value; }

const RejectedValue kRejectedValues[] = {
    {"UnknownCollective", "gather:ring"},
    {"AlgorithmOfAnotherCollective", "allreduce:tree"},
    {"AllGatherHasNoBruck", "allgather:bruck"},
    {"UnknownAlgorithm", "broadcast:fastest"},
    {"NoAlgorithm", "reduce"},
    {"EmptyAlgorithm", "alltoall:"},
    {"SecondEntryWrong", "allreduce:ring,reducescatter:rd"},
};

void checkRejectionSentence(const std::string& value) {
  const std::string error = lastErrorText(nullptr);
  RANK_CHECK(error.find("SLIMECCL_ALGO") != std::string::npos, "SLIMECCL_ALGO=", value,
             ": the last error does not name the variable: \"", error, "\"");
}

class AlgoOverrideRejected : public ::testing::TestWithParam<RejectedValue> {
 protected:
  RunOptions options() const {
    RunOptions options;
    options.env["SLIMECCL_ALGO"] = GetParam().value;
    return options;
  }
};

TEST_P(AlgoOverrideRejected, InitRankFailsWithInvalidArgumentOnForkedRanks) {
  const std::string value = GetParam().value;
  runRanksRaw(
      Launch::kForkedShm, 2,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        slimecclComm_t comm = nullptr;
        RANK_CHECK_RESULT(slimecclInvalidArgument, slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
        checkRejectionSentence(value);
      },
      options());
}

TEST_P(AlgoOverrideRejected, InitRankFailsWithInvalidArgumentOnOneThreadRank) {
  const std::string value = GetParam().value;
  runRanksRaw(
      Launch::kThreads, 1,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        slimecclComm_t comm = nullptr;
        RANK_CHECK_RESULT(slimecclInvalidArgument, slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
        checkRejectionSentence(value);
      },
      options());
}

TEST_P(AlgoOverrideRejected, InitAllFailsWithInvalidArgument) {
  const std::string value = GetParam().value;
  // One thread launch only to run the call with the variable set.
  runRanksRaw(
      Launch::kThreads, 1,
      [&](int, int, const slimecclUniqueId&) {
        std::vector<slimecclComm_t> comms(3, nullptr);
        RANK_CHECK_RESULT(slimecclInvalidArgument, slimecclCommInitAll(comms.data(), 3, nullptr), nullptr);
        checkRejectionSentence(value);
      },
      options());
}

INSTANTIATE_TEST_SUITE_P(Values, AlgoOverrideRejected, ::testing::ValuesIn(kRejectedValues),
                         [](const ::testing::TestParamInfo<RejectedValue>& info) { return info.param.name; });

TEST(AlgoOverride, EveryCollectiveForcedInOneValue) {
  RunOptions options;
  options.env["SLIMECCL_ALGO"] =
      "allgather:hd,reducescatter:ring,allreduce:rd,broadcast:chain,reduce:rs_gather,alltoall:bruck";
  runRanks(
      Launch::kForkedShm, 3,
      [](int, slimecclComm_t comm) {
        uint64_t seed = 0;
        for (Collective collective : {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllReduce,
                                      Collective::kBroadcast, Collective::kReduce, Collective::kAlltoAll}) {
          checkCall(collective, comm, CallShape{slimecclFloat32, slimecclSum, 13, 1, false, false, ++seed});
        }
      },
      options);
}

}  // namespace
}  // namespace slimeccl_test
