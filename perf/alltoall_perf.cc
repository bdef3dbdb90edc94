// alltoall_perf: nccl-tests' alltoall_perf for slimecclAlltoAll. The size column is each rank's send
// bytes (count * nranks * type size); count is the elements a rank sends to each rank, the call's
// count argument. Block j of rank r's send buffer goes to block r of rank j's receive buffer. In
// place (send == recv) the library sends from a snapshot of the input, so the in-place columns are
// measured and checked like the out-of-place ones.
#include "common/bandwidth.h"
#include "common/datatypes.h"
#include "common/perf_main.h"

namespace slimeccl_perf {
namespace {

class AllToAllTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "alltoall"; }

  ElementCounts counts(size_t count, int nranks) const override {
    const size_t perPeer = count / static_cast<size_t>(nranks);
    return {.send = perPeer * static_cast<size_t>(nranks),
            .recv = perPeer * static_cast<size_t>(nranks),
            .param = perPeer,
            .sendInPlaceOffset = 0,
            .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return allToAllBusBwFactor(nranks); }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int rank,
                    int nranks) const override {
    const size_t blockBytes = counts.param * dataTypeSize(spec.type);
    for (int source = 0; source < nranks; ++source) {
      fillPattern(static_cast<char*>(expected) + static_cast<size_t>(source) * blockBytes, spec.type, counts.param,
                  source, static_cast<size_t>(rank) * counts.param);
    }
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclAlltoAll, buffers.send, buffers.recv, counts.param, spec.type, rankComm.comm(),
                       rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::AllToAllTest{}); }
