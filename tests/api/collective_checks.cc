#include "collective_checks.h"

#include "buffers.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {

std::string describeCall(Collective collective, const CallShape& shape) {
  std::string text = concat(collectiveName(collective), " of ", shape.count, " x ", datatypeName(shape.datatype));
  if (isReduction(collective)) text += concat(", op ", opName(shape.op));
  if (isRooted(collective)) {
    text += concat(", root ", shape.root);
    if (!shape.inPlace && shape.unusedBuffersNull) text += ", NULL unused buffers";
  }
  return text + concat(shape.inPlace ? ", in place" : ", out of place", ", seed ", shape.seed);
}

void checkCall(Collective collective, slimecclComm_t comm, const CallShape& shape) {
  withContext(describeCall(collective, shape), [&] {
    switch (collective) {
      case Collective::kAllGather: checkAllgather(comm, shape); return;
      case Collective::kReduceScatter: checkReducescatter(comm, shape); return;
      case Collective::kAllReduce: checkAllreduce(comm, shape); return;
      case Collective::kBroadcast: checkBroadcast(comm, shape); return;
      case Collective::kReduce: checkReduce(comm, shape); return;
      case Collective::kAlltoAll: checkAlltoall(comm, shape); return;
    }
  });
}

}  // namespace slimeccl_test
