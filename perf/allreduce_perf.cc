// allreduce_perf: nccl-tests' all_reduce_perf for slimecclAllReduce. The size column is the vector
// (count * type size); in place, send and receive share one buffer.
#include "common/bandwidth.h"
#include "common/perf_main.h"
#include "common/reduction_values.h"

namespace slimeccl_perf {
namespace {

class AllReduceTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "allreduce"; }
  bool usesRedOp() const override { return true; }

  ElementCounts counts(size_t count, int) const override {
    return {.send = count, .recv = count, .param = count, .sendInPlaceOffset = 0, .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return allReduceBusBwFactor(nranks); }

  void fillInput(void* send, const ElementCounts& counts, const OpSpec& spec, int rank, int nranks) const override {
    fillReductionInput(send, spec.type, spec.op, nranks, rank, counts.send);
  }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int, int nranks) const override {
    fillReductionResult(expected, spec.type, spec.op, nranks, counts.recv);
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclAllReduce, buffers.send, buffers.recv, counts.param, spec.type, spec.op,
                       rankComm.comm(), rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::AllReduceTest{}); }
