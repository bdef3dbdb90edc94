// broadcast_perf: nccl-tests' broadcast_perf for slimecclBroadcast. The size column is the vector
// (count * type size). Only the root's input is filled, so in place a rank that did not receive
// keeps the poison and is counted wrong.
#include "common/bandwidth.h"
#include "common/perf_main.h"

namespace slimeccl_perf {
namespace {

class BroadcastTest final : public CollectiveTest {
 public:
  std::string_view algoCollective() const override { return "broadcast"; }
  bool usesRoot() const override { return true; }

  ElementCounts counts(size_t count, int) const override {
    return {.send = count, .recv = count, .param = count, .sendInPlaceOffset = 0, .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return broadcastBusBwFactor(nranks); }

  void fillInput(void* send, const ElementCounts& counts, const OpSpec& spec, int rank, int) const override {
    if (rank == spec.root) fillPattern(send, spec.type, counts.send, rank);
  }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int, int) const override {
    fillPattern(expected, spec.type, counts.recv, spec.root);
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    SLIMECCL_PERF_CALL(rankComm, slimecclBroadcast, buffers.send, buffers.recv, counts.param, spec.type, spec.root,
                       rankComm.comm(), rankComm.stream());
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::BroadcastTest{}); }
