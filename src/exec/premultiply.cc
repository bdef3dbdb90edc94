#include "src/exec/premultiply.h"

#include "algorithms/reduce.h"
#include "src/comm.h"
#include "src/base/error.h"

namespace slimeccl {

slimecclResult_t premultiplyInputs(std::vector<OpRecord>& ops, std::vector<std::vector<char>>& held, CopyOrder order) {
  for (OpRecord& op : ops) {
    if (!op.premul.on) continue;
    uint64_t bits = 0;
    if (const slimecclResult_t rc = premulScalarBits(op.premul, op.type, order, &bits); rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank {}: {}: reading the PreMulSum scalar: ", op.comm->rank, describeOp(op)));
      return rc;
    }
    const Region input = readRegion(op);
    std::vector<char>& scaled = held.emplace_back(input.bytes);
    scaleArray(scaled.data(), input.data, input.bytes / typeSize(op.type), op.type, bits);
    op.sendbuff = scaled.data();
    op.redOp = slimecclSum;
    op.premul.on = false;
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
