// sendrecv_perf: nccl-tests' sendrecv_perf. Every rank sends to rank+1 and receives from rank-1 (a
// ring; one rank sends to itself) in one group. In place, send and receive share one buffer.
#include "common/bandwidth.h"
#include "common/perf_main.h"

namespace slimeccl_perf {
namespace {

int nextRank(int rank, int nranks) { return (rank + 1) % nranks; }
int previousRank(int rank, int nranks) { return (rank - 1 + nranks) % nranks; }

class SendRecvTest final : public CollectiveTest {
 public:
  // Point-to-point has no algorithm to choose.
  std::string_view algoCollective() const override { return {}; }

  ElementCounts counts(size_t count, int) const override {
    return {.send = count, .recv = count, .param = count, .sendInPlaceOffset = 0, .recvInPlaceOffset = 0};
  }

  double busBwFactor(int nranks) const override { return sendRecvBusBwFactor(nranks); }

  void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int rank,
                    int nranks) const override {
    fillPattern(expected, spec.type, counts.recv, previousRank(rank, nranks));
  }

  void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
           const OpSpec& spec) const override {
    const int rank = rankComm.rank();
    const int nranks = rankComm.nranks();
    SLIMECCL_PERF_CALL(rankComm, slimecclGroupStart);
    SLIMECCL_PERF_CALL(rankComm, slimecclSend, buffers.send, counts.param, spec.type, nextRank(rank, nranks),
                       rankComm.comm(), rankComm.stream());
    SLIMECCL_PERF_CALL(rankComm, slimecclRecv, buffers.recv, counts.param, spec.type, previousRank(rank, nranks),
                       rankComm.comm(), rankComm.stream());
    SLIMECCL_PERF_CALL(rankComm, slimecclGroupEnd);
  }
};

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) { return slimeccl_perf::runPerfMain(argc, argv, slimeccl_perf::SendRecvTest{}); }
