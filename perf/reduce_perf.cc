// reduce_perf: nccl-tests' reduce_perf for slimecclReduce. The size column is the vector (count *
// type size). As in nccl-tests only the root's result is checked: NCCL leaves the other ranks'
// receive buffers undefined.
#include "common/bandwidth.h"
#include "common/perf_main.h"
#include "common/reduction_values.h"

namespace slimeccl_perf {
namespace {

class ReduceTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "reduce"; }
  bool usesRedOp() const override { return true; }
  bool usesRoot() const override { return true; }

  ElementCounts counts(size_t count, int) const override {
    return {.send = count, .recv = count, .param = count, .sendInPlaceOffset = 0, .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return reduceBusBwFactor(nranks); }

  void fillInput(void* send, const ElementCounts& counts, const OpSpec& spec, int rank, int nranks) const override {
    fillReductionInput(send, spec.type, spec.op, nranks, rank, counts.send);
  }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int rank,
                    int nranks) const override {
    if (rank == spec.root) fillReductionResult(expected, spec.type, spec.op, nranks, counts.recv);
  }

  size_t checkedElements(const ElementCounts& counts, const OpSpec& spec, int rank) const override {
    return rank == spec.root ? counts.recv : 0;
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclReduce, buffers.send, buffers.recv, counts.param, spec.type, spec.op,
                       spec.root, rankComm.comm(), rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::ReduceTest{}); }
