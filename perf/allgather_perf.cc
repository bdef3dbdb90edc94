// allgather_perf: nccl-tests' all_gather_perf for slimecclAllGather. The size column is the gathered
// bytes (sendcount * nranks * type size); count is sendcount, the call's count argument.
#include "common/bandwidth.h"
#include "common/datatypes.h"
#include "common/perf_main.h"

namespace slimeccl_perf {
namespace {

class AllGatherTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "allgather"; }

  ElementCounts counts(size_t count, int nranks) const override {
    const size_t sendCount = count / static_cast<size_t>(nranks);
    // In place, rank r's send data is its own block of the result.
    return {.send = sendCount,
            .recv = sendCount * static_cast<size_t>(nranks),
            .param = sendCount,
            .sendInPlaceOffset = sendCount,
            .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return allGatherBusBwFactor(nranks); }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int, int nranks) const override {
    const size_t blockBytes = counts.send * dataTypeSize(spec.type);
    for (int rank = 0; rank < nranks; ++rank) {
      fillPattern(static_cast<char*>(expected) + static_cast<size_t>(rank) * blockBytes, spec.type, counts.send, rank);
    }
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclAllGather, buffers.send, buffers.recv, counts.param, spec.type,
                       rankComm.comm(), rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::AllGatherTest{}); }
