// reducescatter_perf: nccl-tests' reduce_scatter_perf for slimecclReduceScatter. The size column is
// each rank's send bytes (recvcount * nranks * type size); count is recvcount, the call's count
// argument. Rank r receives elements [r * recvcount, (r + 1) * recvcount) of the reduced vector; in
// place, that is where its result lands in the send buffer.
#include "common/bandwidth.h"
#include "common/datatypes.h"
#include "common/perf_main.h"
#include "common/reduction_values.h"

namespace slimeccl_perf {
namespace {

class ReduceScatterTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "reducescatter"; }
  bool usesRedOp() const override { return true; }

  ElementCounts counts(size_t count, int nranks) const override {
    const size_t recvCount = count / static_cast<size_t>(nranks);
    return {.send = recvCount * static_cast<size_t>(nranks),
            .recv = recvCount,
            .param = recvCount,
            .sendInPlaceOffset = 0,
            .recvInPlaceOffset = recvCount};
  }

  double busBwFactor(int nranks) const override { return reduceScatterBusBwFactor(nranks); }

  void fillInput(void* send, const ElementCounts& counts, const OpSpec& spec, int rank, int nranks) const override {
    fillReductionInput(send, spec.type, spec.op, nranks, rank, counts.send);
  }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int rank,
                    int nranks) const override {
    fillReductionResult(expected, spec.type, spec.op, nranks, counts.recv, static_cast<size_t>(rank) * counts.recv);
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclReduceScatter, buffers.send, buffers.recv, counts.param, spec.type, spec.op,
                       rankComm.comm(), rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::ReduceScatterTest{}); }
