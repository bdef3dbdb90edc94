// SLIMECCL_GDR and SLIMECCL_GDR_LEVEL at init: a value neither reads is InvalidArgument with a
// sentence naming the variable; SLIMECCL_GDR=on where GPUDirect RDMA cannot be used (no module
// here reaches device memory: the socket module moves bytes with the CPU, and this machine has no
// verbs device with a GPU) is InvalidUsage with the reason; auto and off make the comm as before.
#include <gtest/gtest.h>

#include <string>

#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

void expectInit(slimecclResult_t expected, const std::string& variable, const std::string& value,
                const std::string& sentence) {
  RunOptions options;
  options.env[variable] = value;
  runRanksRaw(
      Launch::kForkedSocket, 2,
      [&](int rank, int nranks, const slimecclUniqueId& id) {
        slimecclComm_t comm = nullptr;
        RANK_CHECK_RESULT(expected, slimecclCommInitRank(&comm, nranks, id, rank), nullptr);
        if (expected == slimecclSuccess) {
          RANK_CHECK_SUCCESS(slimecclCommDestroy(comm), nullptr);
          return;
        }
        const std::string error = lastErrorText(nullptr);
        RANK_CHECK(error.find(sentence) != std::string::npos, variable, "=", value, ": the error \"", error,
                   "\" does not say \"", sentence, "\"");
      },
      options);
}

TEST(GdrSetting, AValueNoneReadsIsRefusedNamingTheVariable) {
  expectInit(slimecclInvalidArgument, "SLIMECCL_GDR", "maybe", "SLIMECCL_GDR='maybe' is none of auto, on, off");
  expectInit(slimecclInvalidArgument, "SLIMECCL_GDR_LEVEL", "near",
             "SLIMECCL_GDR_LEVEL='near' is none of PIX, PXB, PHB, NODE, SYS");
}

TEST(GdrSetting, OnWhereItCannotBeUsedRefusesTheCommWithTheReason) {
  expectInit(slimecclInvalidUsage, "SLIMECCL_GDR", "on",
             "SLIMECCL_GDR=on asks for GPUDirect RDMA, which cannot be used: the 'socket' module moves bytes with "
             "the CPU");
}

TEST(GdrSetting, AutoAndOffMakeTheCommAsBefore) {
  expectInit(slimecclSuccess, "SLIMECCL_GDR", "auto", "");
  expectInit(slimecclSuccess, "SLIMECCL_GDR", "off", "");
  expectInit(slimecclSuccess, "SLIMECCL_GDR_LEVEL", "sys", "");
}

}  // namespace
}  // namespace slimeccl_test
